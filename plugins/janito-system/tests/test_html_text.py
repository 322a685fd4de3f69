"""The HTML-to-text conversion GetUrl uses."""

from __future__ import annotations

from janito_system._html_text import html_to_text


def test_structure_survives() -> None:
    html = (
        "<html><head><title> A  &amp; B </title><script>var a = '<p>x</p>';</script></head>"
        "<body><h2>Section</h2><p>one\n   two</p><ol><li>first<ul><li>inner</li></ul></li>"
        "<li>second</li></ol><table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr>"
        "</table>a<br>b<hr>c</body></html>"
    )
    text, title, _ = html_to_text(html)
    assert title == "A & B"
    assert text == (
        "## Section\n\none two\n\n- first\n  - inner\n- second\n\nk | v\n1 | 2\n\na\nb\n---\nc"
    )


def test_head_without_end_tag_does_not_hide_the_body() -> None:
    text, title, _ = html_to_text("<head><title>T</title><body><p>visible</p>")
    assert title == "T"
    assert text == "visible"


def test_skipped_elements() -> None:
    html = ("<p>keep</p><style>.x{}</style><noscript>no</noscript><svg><text>s</text></svg>"
            "<template><p>t</p></template><select><option>o</option></select><p>end</p>")
    assert html_to_text(html)[0] == "keep\n\nend"


def test_links_resolved_against_the_base() -> None:
    html = ('<a href="/a">A</a> <a href="b.html">B</a> <a href="#top">top</a> '
            '<a href="mailto:x@y">mail</a> <a href="https://other/">O</a>')
    text, _, _ = html_to_text(html, "http://host/dir/page", include_links=True)
    assert text == "A (http://host/a) B (http://host/dir/b.html) top mail O (https://other/)"
    assert html_to_text(html, "http://host/")[0] == "A B top mail O"


def test_image_alt_text_and_entities() -> None:
    assert html_to_text('<p>x <img src="a.png" alt="a cat"> &lt;y&gt; &#233;</p>')[0] == \
        "x [a cat] <y> é"


def test_malformed_html_does_not_raise() -> None:
    for html in ("<p>unclosed <b>bold", "</div></p>text", "<<<>>>", "<a href=>x</a",
                 "<!-- comment only", "<pre>one\n  two", ""):
        text, _, _ = html_to_text(html)
        assert isinstance(text, str)
    assert html_to_text("<pre>one\n  two")[0] == "one\n  two"


def test_parsing_stops_once_enough_text_is_there() -> None:
    html = "".join(f"<p>paragraph {i}</p>" for i in range(20_000))  # 400 kB, 12 feeds
    full, _, complete = html_to_text(html)
    assert complete is True
    start, _, early = html_to_text(html, stop_after=(500, None))
    assert early is False
    assert len(start) > 500
    assert full.startswith(start[:500])
    lines, _, early = html_to_text(html, stop_after=(None, 30))
    assert early is False
    assert lines.split("\n")[:30] == full.split("\n")[:30]
    small, _, complete = html_to_text("<p>short</p>", stop_after=(500, 30))
    assert (small, complete) == ("short", True)
