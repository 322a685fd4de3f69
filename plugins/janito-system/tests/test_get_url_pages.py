"""GetUrl on saved pages of real kinds of sites, served from 127.0.0.1: Markdown, paging."""

from __future__ import annotations

import re

import pytest
from conftest import PAGES, LoopbackServer

from janito_core.testing import ToolsetTester


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="r")
    return janito


# What each page is about must be there; its furniture must not.
EXPECTED = {
    "docs_reference": (
        ["# [`shutil`]", "cannot copy all file metadata",
         "copytree(source, destination, ignore=ignore_patterns('*.pyc', 'tmp*'))",
         "| *symlinks* | Copy links as links instead of their targets |",
         "[Lib/shutil.py](https://github.com/python/cpython/tree/3.13/Lib/shutil.py)"],
        ["gtag(", "Quick search", "Created using", "font-weight"]),
    "news_article": (
        ["# Town council approves new cycle lanes after two-year debate",
         "voted nine to four on Tuesday evening", "- a 41% rise in the number of people",
         "> We are not against cyclists.", "## Concerns from traders"],
        ["We use cookies", "FreshBox", "Advertisement", "Heatwave warning", "Registered in England",
         "__PRELOADED_STATE__", "Sign up to Riverside Today", "cyclist_dave"]),
    "wiki_article": (
        ["# Osmotic pressure", "| Seawater | about 1.1 osmol/L | 2.7 MPa |",
         "## Applications", "Fundamentals of Biochemistry"],
        ["Random article", "[edit]", "wgPageName", "additional terms may apply",
         "Search Wikipedia", "42 languages"]),
    "blog_post": (
        ["# Debugging a slow PostgreSQL query with `EXPLAIN ANALYZE`", "```sql",
         "WHERE o.created_at >= now() - interval '7 days'",
         "Rows Removed by Filter: 9412207", "re:\n +- fail the build above 200 ms,"],
        ["hljs.highlightAll", "max-width:42em", "You might also like"]),
    "qa_thread": (
        ["# [How do I remove a key from a dictionary while iterating over it?]",
         "```python\nfor k, v in mydict.items():\n    if v == 0:\n        del mydict[k]\n```",
         "for k in list(mydict):", "returned a list"],
        ["Hot Network Questions", "StackExchange.init", "Cookie Policy", "Log in"]),
}


@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_a_saved_page_becomes_markdown_without_its_furniture(
        page: str, system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=f"{http_server.base}/pages/{page}", max_length=None,
                         max_lines=None)
    assert result["success"] is True, result
    content = result["content"]
    present, absent = EXPECTED[page]
    for fragment in present:
        if fragment.startswith("re:"):
            assert re.search(fragment[3:], content), (page, fragment, content)
        else:
            assert fragment in content, (page, fragment, content)
    for fragment in absent:
        assert fragment not in content, (page, fragment, content)
    assert not re.search(r"<(?:div|span|script|style|p|a|td)\b", content), content
    assert result["title"] and result["truncated"] is False
    assert result["total_length"] == len(content)


@pytest.mark.parametrize("page", sorted(EXPECTED))
def test_paging_with_start_index_gives_back_the_whole_page(
        page: str, system: ToolsetTester, http_server: LoopbackServer) -> None:
    url = f"{http_server.base}/pages/{page}"
    whole = system.call("GetUrl", url=url, max_length=None, max_lines=None)["content"]
    parts = []
    start = 0
    for _ in range(200):
        result = system.call("GetUrl", url=url, start_index=start, max_length=700,
                             max_lines=None)
        assert result["success"] is True, result
        text = result["content"]
        if "next_start_index" not in result:
            parts.append(text)
            break
        text, marker = text.rsplit("\n[... truncated: ", 1)
        assert f"start_index={result['next_start_index']}" in marker
        parts.append(text)
        start = result["next_start_index"]
    assert "".join(parts) == whole
    past = system.call("GetUrl", url=url, start_index=len(whole) + 1)
    assert past["error_type"] == "invalid_arguments" and past["total_length"] == len(whole)


def test_a_first_page_of_a_large_document_converts_only_what_it_needs(
        system: ToolsetTester, http_server: LoopbackServer) -> None:
    """The large route holds 20,000 paragraphs (>500 kB); the first page is quick and says
    the total is not known, a later page continues it."""
    url = http_server.base + "/big-html"
    first = system.call("GetUrl", url=url, max_length=1000, max_lines=None)
    assert first["total_length"] is None and first["next_start_index"] == 1000
    second = system.call("GetUrl", url=url, max_length=1000, max_lines=None, start_index=1000)
    joined = first["content"].split("\n[... truncated")[0] + second["content"].split(
        "\n[... truncated")[0]
    assert "Paragraph number 40.\n\nParagraph number 41." in joined
    assert second["duration_ms"] < 20_000


def test_links_are_absolute_against_the_final_url(system: ToolsetTester,
                                                  http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/pages/wiki_article")
    assert f"]({http_server.base}/wiki/Pressure)" in result["content"]
    plain = system.call("GetUrl", url=http_server.base + "/pages/wiki_article",
                        include_links=False)
    assert "](" not in plain["content"] and "minimum pressure which" in plain["content"]


def test_every_saved_page_is_checked() -> None:
    assert sorted(p.stem for p in PAGES.glob("*.html")) == sorted(EXPECTED)
