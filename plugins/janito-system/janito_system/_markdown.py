"""HTML -> Markdown for GetUrl: lxml to parse, clean and cut; markdownify to write Markdown.

The choice and its measurements are in ``docs/decisions/0011-geturl-httpx-markdown.md``.

1. lxml parses the page (C speed, lenient with broken markup).
2. What a reader of the page does not read is removed: scripts, styles and other
   non-text elements, forms and their controls, navigation, banners, footers, sidebars,
   cookie notices, advertisements, share and comment blocks, hidden elements. Elements
   are recognised by tag, by ARIA role and by words of their class and id. An element
   that holds the page's title (an ``h1``), its ``main`` or ``article``, or most of its
   text is never removed, whatever its class says, so a page built inside a
   ``<div class="sidebar-layout">`` keeps its content.
3. Links are made absolute against the page's address (its ``<base href>`` first).
4. When only the start of the text is needed (a first page of ``max_length``
   characters), only the leading blocks that hold it go on: markdownify, which builds a
   BeautifulSoup tree, costs about a second per megabyte of HTML, and a 5 MB page read
   for its first 5,000 characters should not pay for the rest.
5. markdownify writes Markdown: ATX headings, ``-`` bullets, fenced code blocks with the
   language of their ``language-*`` class, tables as pipe tables.
"""

from __future__ import annotations

import re
from typing import Any

#: Elements that never hold text for a reader.
_DROP_TAGS = frozenset({
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed",
    "form", "button", "select", "input", "textarea", "dialog", "nav", "footer", "aside",
    "header", "link", "meta",
})
#: ARIA roles of page furniture.
_DROP_ROLES = frozenset({
    "navigation", "banner", "contentinfo", "complementary", "search", "dialog",
    "alertdialog", "menu", "menubar", "toolbar", "tablist",
})
#: Words of class names and ids that mark page furniture (the names are split at
#: anything that is not a letter or digit, so "ad-slot" holds "ad" and "headline" does not).
_NOISE_WORDS = frozenset({
    "cookie", "cookies", "consent", "gdpr", "ad", "ads", "advert", "adverts",
    "advertisement", "advertising", "sponsored", "promo", "newsletter", "subscribe",
    "share", "sharing", "social", "related", "recommended", "breadcrumb", "breadcrumbs",
    "sidebar", "navbox", "catlinks", "editsection", "headerlink", "toolbar", "skip",
    "jump", "comments", "comment", "popup", "modal", "banner", "footer", "nav",
    "navigation", "menu", "toc", "dropdown", "portlet", "noprint",
})
_WORD = re.compile(r"[a-z0-9]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang|highlight)-([A-Za-z0-9_+#-]+)")
_CONTAINERS = frozenset({"html", "body", "main", "article", "section", "div", "center"})
_BLANKS = re.compile(r"\n{3,}")


def html_to_markdown(html: str, base_url: str | None, limit: int | None = None,
                     include_links: bool = True) -> tuple[str, str | None, bool]:
    """(Markdown, the page's title, whether the Markdown is the whole page).

    ``limit``: only about that many characters are needed; the Markdown may then be the
    start of the page only (the third value is False).
    """
    import lxml.etree
    import lxml.html

    try:
        document = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):  # empty, or nothing but a comment
        return "", None, True
    title = _title(document)
    body = document.find("body")
    root = body if body is not None else document
    _clean(root)
    blocks, complete = _leading_blocks(root, limit)
    base = _base(document, base_url)
    for block in blocks:
        if not isinstance(block, str):  # only the links of the blocks kept are rewritten
            _links(block, base, include_links)
    part = "".join(block if isinstance(block, str) else
                   lxml.html.tostring(block, encoding="unicode") for block in blocks)
    markdown = _converter().convert(part)
    return _BLANKS.sub("\n\n", markdown).strip(), title, complete


def _title(document: Any) -> str | None:
    element = document.find(".//title")
    if element is None:
        return None
    text = " ".join((element.text_content() or "").split())
    return text or None


def _base(document: Any, base_url: str | None) -> str | None:
    """The address relative links are resolved against: the page's ``<base href>`` (itself
    resolved against the page's address) or the page's address."""
    from urllib.parse import urljoin

    element = document.find(".//base[@href]")
    if element is None:
        return base_url
    href = (element.get("href") or "").strip()
    return urljoin(base_url or "", href) if href else base_url


def _links(block: Any, base: str | None, include_links: bool) -> None:
    """Make the links of ``block`` absolute against ``base``, or drop them."""
    from urllib.parse import urljoin

    for anchor in block.iter("a"):
        # a link's title repeats its text or says little; it would double the Markdown
        anchor.attrib.pop("title", None)
        href = anchor.get("href")
        if href is None:
            continue
        if not include_links:
            del anchor.attrib["href"]
        elif base:
            try:
                anchor.set("href", urljoin(base, href.strip()))
            except ValueError:  # an address urljoin cannot read stays as it is
                pass


def _words(element: Any) -> set[str]:
    text = f"{element.get('class') or ''} {element.get('id') or ''}".lower()
    return set(_WORD.findall(text)) if text.strip() else set()


def _furniture(element: Any) -> bool:
    """Whether ``element`` looks like page furniture (before the protection rule)."""
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag in _DROP_TAGS:
        return True
    role = (element.get("role") or "").strip().lower()
    if role in _DROP_ROLES:
        return True
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    style = element.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    return bool(_words(element) & _NOISE_WORDS)


def _clean(root: Any) -> None:
    """Remove page furniture below ``root`` (see the module's docstring)."""
    import lxml.etree

    total = len(root.text_content() or "")
    doomed = []
    for element in root.iter():
        if element is root:
            continue
        if not isinstance(element.tag, str):  # comments and processing instructions
            doomed.append(element)
            continue
        if element.tag in ("body", "main", "article") or not _furniture(element):
            continue
        if element.tag not in ("script", "style", "noscript", "template", "svg") and \
                _protected(element, total):
            continue
        doomed.append(element)
    for element in doomed:
        parent = element.getparent()
        if parent is None:
            continue
        if isinstance(element, lxml.etree._Comment):  # keep the text that follows it
            _remove_keeping_tail(element)
        else:
            element.drop_tree()


def _remove_keeping_tail(element: Any) -> None:
    parent = element.getparent()
    tail = element.tail
    previous = element.getprevious()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def _protected(element: Any, total: int) -> bool:
    """Whether removing ``element`` would remove what the page is about."""
    if element.find(".//h1") is not None or element.find(".//main") is not None \
            or element.find(".//article") is not None:
        return True
    return total > 0 and len(element.text_content() or "") * 2 > total


def _leading_blocks(root: Any, limit: int | None) -> tuple[list[Any], bool]:
    """The blocks of ``root`` whose text covers the first ``limit`` characters, and whether
    that is all of them. Containers (div, section, ...) are opened when they hold more
    than is needed; any other element is taken whole."""
    if limit is None:
        return [root], True
    # Markdown is never shorter than the text it shows (markup and link addresses add
    # to it), so text beyond the limit is not needed; a margin covers what cleaning and
    # whitespace folding take away.
    wanted = limit + 2000
    blocks: list[Any] = []
    taken = 0

    def take(element: Any) -> bool:
        """Add ``element`` (or its leading children); True once enough is taken."""
        nonlocal taken
        size = len(element.text_content() or "")
        if taken + size <= wanted or element.tag not in _CONTAINERS or len(element) == 0:
            blocks.append(element)
            taken += size
            return taken > wanted
        if element.text and element.text.strip():
            import html

            blocks.append(html.escape(element.text))
            taken += len(element.text)
        for child in element:
            if not isinstance(child.tag, str):
                continue
            if take(child):
                return True
        return taken > wanted

    done = take(root)
    if not done:
        return [root], True
    return blocks, blocks == [root]


def _language(element: Any) -> str:
    """The language of a code block, from a class such as "language-python" on its ``code``
    or the ``pre`` itself."""
    for node in (*element.find_all("code", limit=1), element):
        classes = node.get("class") or []
        match = _LANGUAGE.search(" ".join(classes) if isinstance(classes, list) else classes)
        if match:
            return match.group(1)
    return ""


_CONVERTER: Any = None


def _converter() -> Any:
    """The markdownify converter, built once (its class is made on first use so that
    importing this module does not import markdownify and BeautifulSoup)."""
    global _CONVERTER
    if _CONVERTER is None:
        from markdownify import MarkdownConverter

        class Converter(MarkdownConverter):  # type: ignore[misc]
            def convert_img(self, el: Any, text: str, parent_tags: Any) -> str:
                # A model does not see images; a caption, where there is one, is text.
                return ""

        _CONVERTER = Converter(
            heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=False,
            code_language_callback=_language, table_infer_header=True,
            bs4_options="lxml",
        )
    return _CONVERTER
