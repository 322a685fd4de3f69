"""HTML -> Markdown as GetUrl makes it: structure, what is left out, what is never left out."""

from __future__ import annotations

from janito_system._markdown import html_to_markdown


def md(html: str, base: str | None = "http://host/dir/page", **kwargs: object) -> str:
    return html_to_markdown(html, base, **kwargs)[0]  # type: ignore[arg-type]


def test_structure_survives() -> None:
    html = (
        "<html><head><title> A  &amp; B </title><script>var a = '<p>x</p>';</script></head>"
        "<body><h2>Section</h2><p>one\n   two</p><ol><li>first<ul><li>inner</li></ul></li>"
        "<li>second</li></ol><table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr>"
        "</table><pre><code class='language-python'>if x:\n    y()</code></pre></body></html>"
    )
    text, title, complete = html_to_markdown(html, None)
    assert title == "A & B" and complete is True
    assert text == ("## Section\n\none\ntwo\n\n1. first\n   - inner\n2. second\n\n"
                    "| k | v |\n| --- | --- |\n| 1 | 2 |\n\n```python\nif x:\n    y()\n```")


def test_furniture_is_left_out() -> None:
    html = (
        "<body><div id='cookie-banner'>We use cookies</div><header><a href='/'>Logo</a>"
        "<nav><a href='/a'>Menu A</a></nav></header><div class='ad-slot'>Buy now</div>"
        "<div role='navigation'>crumbs</div><p>The article.</p><aside>Most read</aside>"
        "<form><input value='q'><button>Go</button></form><div style='display: none'>hidden</div>"
        "<div hidden>also hidden</div><div class='share-tools'>Share</div>"
        "<footer>© somebody</footer><!-- a comment --><noscript>enable js</noscript></body>"
    )
    assert md(html) == "The article."


def test_what_a_page_is_about_is_never_left_out() -> None:
    # A class word that marks furniture does not remove the title, main content, or most
    # of the page's text.
    assert "Title" in md("<div class='sidebar-layout'><h1>Title</h1><p>Body.</p></div>")
    wrapped = md("<div class='content with-sidebar'><p>" + "All the text. " * 50 +
                 "</p></div><p>x</p>")
    assert wrapped.startswith("All the text.")
    assert "The post" in md("<header class='post-header'><h1>The post</h1></header>")
    assert "Body" in md("<form id='aspnetForm'><main><p>Body</p></main></form>")


def test_links_are_absolute_and_can_be_dropped() -> None:
    html = ('<p><a href="/a" title="A title">A</a> <a href="b.html">B</a> '
            '<a href="https://other/">O</a></p>')
    assert md(html) == "[A](http://host/a) [B](http://host/dir/b.html) [O](https://other/)"
    assert md(html, include_links=False) == "A B O"


def test_images_are_left_out_captions_kept() -> None:
    html = "<figure><img src='a.png' alt='a cat'><figcaption>The cat, 2024</figcaption></figure>"
    assert md(html) == "The cat, 2024"


def test_malformed_html_does_not_raise() -> None:
    for html in ("<p>unclosed <b>bold", "</div></p>text", "<<<>>>", "<a href=>x</a",
                 "<!-- comment only", "<pre>one\n  two", "", "   ", "\x00\x01"):
        text, _, complete = html_to_markdown(html, None)
        assert isinstance(text, str) and complete is True
    assert md("<pre>one\n  two") == "```\none\n  two\n```"


def test_a_limit_converts_only_the_leading_blocks() -> None:
    html = "<body><div>" + "".join(f"<p>paragraph {i}</p>" for i in range(20_000)) + \
        "</div></body>"
    full, _, complete = html_to_markdown(html, None)
    assert complete is True and full.count("paragraph") == 20_000
    start, _, complete = html_to_markdown(html, None, limit=500)
    assert complete is False
    assert 500 < len(start) < 5000
    assert full.startswith(start)
    small, _, complete = html_to_markdown("<p>short</p>", None, limit=500)
    assert (small, complete) == ("short", True)
