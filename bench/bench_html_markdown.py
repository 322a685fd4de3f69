"""HTML to Markdown for GetUrl: markdownify, html2text and trafilatura on saved pages.

Each converter turns the pages of ``plugins/janito-system/tests/pages/`` (a reference page
of a documentation site, a news article, an encyclopedia article, a blog post with code, a
question-and-answer thread, each with the navigation, banners, scripts and footers such
pages carry) and one large generated page into Markdown. Printed for each converter:

- the median time per page, for the large page (about 1 MB of HTML), and for its first
  5,000 characters (only janito's route converts no more than it needs; for the others the
  figure is the whole page's);
- the time of its first import, in a fresh interpreter;
- quality, as checks per page: the facts of the content that must be there (a sentence of
  the body, a code line with its indentation, a table row on one line, a link with its URL,
  the title as a heading) and the noise that should not (script and style text, cookie
  banners, navigation and footer links, advertisements, raw tags).

janito's own converter of the time (``janito_system._html_text``, plain text), when it is
still there, is measured as the baseline. A converter that is not installed is skipped.

    python bench/bench_html_markdown.py [--runs 15]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

PAGES = Path(__file__).resolve().parents[1] / "plugins" / "janito-system" / "tests" / "pages"


class Check(NamedTuple):
    page: str
    kind: str  # "content" (must be there) or "noise" (must not)
    what: str
    test: Callable[[str], bool]


def line_with(*parts: str) -> Callable[[str], bool]:
    """True when one line of the output holds every part, in order."""
    def test(text: str) -> bool:
        for line in text.splitlines():
            at = 0
            for part in parts:
                at = line.find(part, at)
                if at < 0:
                    break
                at += len(part)
            else:
                return True
        return False
    return test


def heading(title: str) -> Callable[[str], bool]:
    return lambda text: any(line.lstrip().startswith("#") and title in line
                            for line in text.splitlines())


def has(fragment: str) -> Callable[[str], bool]:
    return lambda text: fragment in text


def lacks(fragment: str) -> Callable[[str], bool]:
    return lambda text: fragment not in text


def link(url: str) -> Callable[[str], bool]:
    return lambda text: f"]({url}" in text or f"<{url}>" in text


NO_TAGS = re.compile(r"<(?:div|span|script|style|p|a|table|td)\b", re.IGNORECASE)

CHECKS = [
    # a documentation reference page
    Check("docs_reference", "content", "title heading", heading("High-level file operations")),
    Check("docs_reference", "content", "body sentence", has("cannot copy all file metadata")),
    Check("docs_reference", "content", "code line", line_with("copytree(source, destination, ignore=")),
    Check("docs_reference", "content", "code blank line kept",
          has("ignore_patterns\n\ncopytree") or has("ignore_patterns\n    \n    copytree")),
    Check("docs_reference", "content", "table row on a line", line_with("symlinks", "Copy links as links")),
    Check("docs_reference", "content", "link kept", link("https://github.com/python/cpython/tree/3.13/Lib/shutil.py")),
    Check("docs_reference", "content", "second heading", heading("Archiving operations")),
    Check("docs_reference", "noise", "script text", lacks("gtag(")),
    Check("docs_reference", "noise", "style text", lacks("font-weight: bold")),
    Check("docs_reference", "noise", "footer", lacks("Created using")),
    Check("docs_reference", "noise", "search form", lacks("Quick search")),
    # a news article
    Check("news_article", "content", "headline heading", heading("Town council approves new cycle lanes")),
    Check("news_article", "content", "first paragraph", has("voted nine to four on Tuesday evening")),
    Check("news_article", "content", "quote", has("single biggest change")),
    Check("news_article", "content", "list item", line_with("41% rise")),
    Check("news_article", "content", "subheading", heading("Concerns from traders")),
    Check("news_article", "content", "link kept", link("https://council.example.gov.uk/transport/mill-road-report-2024.pdf")),
    Check("news_article", "content", "blockquote", line_with(">", "We are not against cyclists")),
    Check("news_article", "noise", "cookie banner", lacks("We use cookies to personalise")),
    Check("news_article", "noise", "advertisement", lacks("FreshBox")),
    Check("news_article", "noise", "section navigation", lacks("[Weather](/weather)")),
    Check("news_article", "noise", "preloaded state", lacks("__PRELOADED_STATE__")),
    Check("news_article", "noise", "footer", lacks("Registered in England")),
    Check("news_article", "noise", "most read", lacks("Heatwave warning")),
    # an encyclopedia article
    Check("wiki_article", "content", "title heading", heading("Osmotic pressure")),
    Check("wiki_article", "content", "lead sentence", has("semipermeable membrane")),
    Check("wiki_article", "content", "table row on a line", line_with("Seawater", "2.7 MPa")),
    Check("wiki_article", "content", "second table row", line_with("Blood plasma", "0.73 MPa")),
    Check("wiki_article", "content", "applications", has("water purification")),
    Check("wiki_article", "content", "reference", has("Fundamentals of Biochemistry")),
    Check("wiki_article", "noise", "main menu", lacks("Random article")),
    Check("wiki_article", "noise", "edit links", lacks("[edit]")),
    Check("wiki_article", "noise", "script config", lacks("wgPageName")),
    Check("wiki_article", "noise", "footer licence", lacks("additional terms may apply")),
    # a blog post with code
    Check("blog_post", "content", "title heading", heading("Debugging a slow PostgreSQL query")),
    Check("blog_post", "content", "code block", line_with("WHERE o.created_at >= now() - interval '7 days'")),
    Check("blog_post", "content", "plan output", line_with("Rows Removed by Filter: 9412207")),
    Check("blog_post", "content", "tip", has("autovacuum analyses a table")),
    Check("blog_post", "content", "numbered step", line_with("Add an alert when")),
    Check("blog_post", "content", "nested list", line_with("fail the build above 200 ms")),
    Check("blog_post", "content", "link kept", link("https://www.postgresql.org/docs/current/using-explain.html")),
    Check("blog_post", "noise", "script", lacks("hljs.highlightAll")),
    Check("blog_post", "noise", "style", lacks("max-width:42em")),
    # a question-and-answer thread
    Check("qa_thread", "content", "question heading", heading("How do I remove a key from a dictionary")),
    Check("qa_thread", "content", "question code", line_with("for k, v in mydict.items():")),
    Check("qa_thread", "content", "indented code", line_with("    if v == 0:")),
    Check("qa_thread", "content", "error text", has("dictionary changed size during iteration")),
    Check("qa_thread", "content", "answer code", line_with("for k in list(mydict):")),
    Check("qa_thread", "content", "second answer", has("returned a list")),
    Check("qa_thread", "noise", "hot questions", lacks("Can I freeze cooked rice")),
    Check("qa_thread", "noise", "init script", lacks("StackExchange.init")),
    Check("qa_thread", "noise", "footer", lacks("Cookie Policy")),
]


def big_page() -> str:
    """About 2 MB of release notes: headings, paragraphs, lists, code and a table per entry."""
    parts = ["<html><head><title>Release notes</title></head><body><h1>Release notes</h1>"]
    for n in range(1500):
        parts.append(
            f"<h2>Version 1.{n}.0</h2><p>This release fixes <a href='/issues/{n}'>issue {n}</a> "
            f"and improves <em>throughput</em> by {n % 37}% in the <code>scheduler</code>.</p>"
            "<ul><li>Faster start-up</li><li>Fewer allocations in the parser</li>"
            f"<li>New option <code>--limit={n}</code></li></ul>"
            f"<pre><code>$ tool run --limit={n}\nstarted in {n % 17} ms\n</code></pre>"
            "<table><tr><th>Benchmark</th><th>Before</th><th>After</th></tr>"
            f"<tr><td>parse</td><td>{n + 10} ms</td><td>{n} ms</td></tr></table>"
            "<div class='footnote'><p>Upgrade with the package manager of your platform; "
            "see the documentation for the full list of changes in this version.</p></div>")
    parts.append("</body></html>")
    return "".join(parts)


def converters() -> dict[str, Callable[[str], str]]:
    found: dict[str, Callable[[str], str]] = {}
    try:
        import html2text

        def with_html2text(html: str) -> str:
            converter = html2text.HTML2Text(baseurl="")
            converter.body_width = 0
            converter.ignore_images = True
            return converter.handle(html)

        found["html2text"] = with_html2text
    except ImportError:
        pass
    try:
        from markdownify import markdownify

        def with_markdownify(html: str) -> str:
            return markdownify(html, heading_style="ATX", strip=["img"])

        found["markdownify"] = with_markdownify
    except ImportError:
        pass
    try:
        import trafilatura

        def with_trafilatura(html: str) -> str:
            return trafilatura.extract(html, output_format="markdown", include_links=True,
                                       include_tables=True, include_formatting=True,
                                       favor_recall=True) or ""

        found["trafilatura"] = with_trafilatura
    except ImportError:
        pass
    try:
        from janito_system._html_text import html_to_text

        found["janito (text)"] = lambda html: html_to_text(html, None, True)[0]
    except ImportError:
        pass
    try:
        from janito_system._markdown import html_to_markdown

        found["janito (markdown)"] = lambda html: html_to_markdown(html, "https://example.org/")[0]
        found["janito (markdown)"].first_page = (  # type: ignore[attr-defined]
            lambda html: html_to_markdown(html, "https://example.org/", 5000)[0])
    except ImportError:
        pass
    return found


IMPORTS = {"html2text": "import html2text", "markdownify": "import markdownify",
           "trafilatura": "import trafilatura",
           "janito (text)": "import janito_system._html_text",
           "janito (markdown)": "import janito_system._markdown, lxml.html, markdownify"}


def import_ms(statement: str, runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-X", "importtime", "-c", statement],
                              capture_output=True, text=True, check=True)
        total = 0
        for line in done.stderr.splitlines():
            fields = line.split("|")
            if len(fields) == 3 and fields[2].rstrip() and not fields[2].startswith("  ") \
                    and fields[1].strip().isdigit():
                total += int(fields[1])
        times.append(total / 1000)
    return statistics.median(times)


def timed(convert: Callable[[str], str], html: str, runs: int) -> tuple[float, str]:
    out = convert(html)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        convert(html)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--show", metavar="CONVERTER", help="print each page as CONVERTER makes it")
    args = parser.parse_args()
    pages = {p.stem: p.read_text(encoding="utf-8") for p in sorted(PAGES.glob("*.html"))}
    big = big_page()
    found = converters()
    print(f"pages: {', '.join(f'{k} ({len(v) // 1024} KB)' for k, v in pages.items())}; "
          f"large page {len(big) / 1e6:.1f} MB; {args.runs} runs each")
    print(f"{'converter':<18} {'import ms':>9} {'page ms':>8} {'large s':>8} {'first 5k s':>10} "
          f"{'content':>9} {'noise out':>9} {'raw tags':>8}")
    for name, convert in found.items():
        page_times: list[float] = []
        outputs: dict[str, str] = {}
        for page, html in pages.items():
            elapsed, outputs[page] = timed(convert, html, args.runs)
            page_times.append(elapsed)
        large, _ = timed(convert, big, max(3, args.runs // 5))
        first = getattr(convert, "first_page", None)
        first_page = timed(first, big, max(3, args.runs // 5))[0] if first else large
        content = [c for c in CHECKS if c.kind == "content"]
        noise = [c for c in CHECKS if c.kind == "noise"]
        content_ok = sum(c.test(outputs[c.page]) for c in content)
        noise_ok = sum(c.test(outputs[c.page]) for c in noise)
        tags = sum(bool(NO_TAGS.search(out)) for out in outputs.values())
        print(f"{name:<18} {import_ms(IMPORTS[name]):>9.0f} "
              f"{statistics.median(page_times) * 1000:>8.2f} {large:>8.2f} {first_page:>10.2f} "
              f"{content_ok:>4}/{len(content):<4} {noise_ok:>4}/{len(noise):<4} {tags:>8}")
        missed = [f"{c.page}: {c.what}" for c in content if not c.test(outputs[c.page])]
        if missed:
            print(f"    content missed: {'; '.join(missed)}")
        kept = [f"{c.page}: {c.what}" for c in noise if not c.test(outputs[c.page])]
        if kept:
            print(f"    noise kept: {'; '.join(kept)}")
        if args.show == name:
            for page, out in outputs.items():
                print(f"===== {page} =====\n{out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
