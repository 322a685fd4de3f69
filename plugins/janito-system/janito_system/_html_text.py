"""HTML -> readable plain text, with the standard library's ``html.parser``.

Scripts, styles and other non-text elements are dropped; block elements start new
lines, paragraphs and headings are separated by a blank line, headings get ``#``
marks, list items ``- ``, table cells `` | ``; ``<pre>`` keeps its layout. Links can be
kept as ``text (url)`` with the URL made absolute.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
    "embed", "select", "button",
})
_PARAGRAPH = frozenset({
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "table", "blockquote", "pre",
    "figure", "form", "fieldset", "details", "section", "article", "header", "footer", "nav",
    "aside", "main", "address",
})
_LINE = frozenset({
    "div", "li", "dt", "dd", "tr", "br", "hr", "caption", "figcaption", "summary", "legend",
    "label", "option", "tbody", "thead", "tfoot", "body", "html",
})
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_BLANKS = re.compile(r"\n{3,}")
_FEED_SIZE = 32_768


class _Extractor(HTMLParser):
    def __init__(self, base_url: str | None, include_links: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.include_links = include_links
        self.parts: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.list_depth = 0
        self.in_title = False
        self.in_head = False
        self.title_parts: list[str] = []
        self.links: list[str | None] = []
        self.row_cells = 0

    # -- output helpers ---------------------------------------------------------------

    def _last_char(self) -> str:
        for part in reversed(self.parts):
            if part:
                return part[-1]
        return "\n"

    def _newlines(self, count: int) -> None:
        have = 0
        for part in reversed(self.parts):
            stripped = part.rstrip(" ")
            if not stripped:
                continue
            have += len(stripped) - len(stripped.rstrip("\n"))
            if stripped.strip("\n"):
                break
        if not self.parts:
            return
        if have < count:
            self.parts.append("\n" * (count - have))

    def _block_break(self, tag: str) -> None:
        """The line break or blank line that the start and the end of a block element make."""
        if tag in ("ul", "ol") and self.list_depth:
            self._newlines(1)
        elif tag in _PARAGRAPH:
            self._newlines(2)
        elif tag in _LINE:
            self._newlines(1)

    def _text(self, text: str) -> None:
        if self.pre_depth:
            self.parts.append(text)
            return
        text = _SPACES.sub(" ", text)
        if text.startswith(" ") and self._last_char() in " \n":
            text = text.lstrip(" ")
        if text:
            self.parts.append(text)

    # -- parser callbacks -------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title_parts:
            self.in_title = True
            return
        if tag == "head":
            self.in_head = True
            return
        if tag == "body":  # the end tag of <head> may be left out
            self.in_head = False
        if tag in _SKIP:
            self.skip_depth += 1
            return
        if self.skip_depth:
            return
        self._block_break(tag)
        if tag in ("ul", "ol"):
            self.list_depth += 1
        elif tag == "li":
            self.parts.append("  " * max(self.list_depth - 1, 0) + "- ")
        elif len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag == "pre":
            self.pre_depth += 1
        elif tag == "hr":
            self.parts.append("---")
            self._newlines(1)
        elif tag == "tr":
            self.row_cells = 0
        elif tag in ("td", "th"):
            if self.row_cells:
                self.parts.append(" | ")
            self.row_cells += 1
        elif tag == "a":
            href = dict(attrs).get("href") if self.include_links else None
            self.links.append(self._absolute(href))
        elif tag == "img":
            alt = (dict(attrs).get("alt") or "").strip()
            if alt:
                self._text(f" [{alt}] ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":  # <a/> holds no text
            return
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "hr", "img"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
            return
        if tag == "head":
            self.in_head = False
            return
        if tag in _SKIP:
            self.skip_depth = max(self.skip_depth - 1, 0)
            return
        if self.skip_depth:
            return
        if tag in ("ul", "ol"):
            self.list_depth = max(self.list_depth - 1, 0)
        elif tag == "pre":
            self.pre_depth = max(self.pre_depth - 1, 0)
        elif tag == "a" and self.links:
            href = self.links.pop()
            if href:
                self.parts.append(f" ({href})")
        self._block_break(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title_parts.append(data)
        elif not self.skip_depth and not self.in_head:
            self._text(data)

    def _absolute(self, href: str | None) -> str | None:
        if not href:
            return None
        href = href.strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "data:")):
            return None
        return urljoin(self.base_url, href) if self.base_url else href

    def has_more_than(self, chars: int | None, lines: int | None) -> bool:
        """Whether the text so far exceeds ``chars`` characters or ``lines`` lines."""
        if chars is not None and sum(map(len, self.parts)) <= chars:
            if lines is None:
                return False
        text = self.result()[0]  # the text as it will be shown, blank lines folded
        if chars is not None and len(text) > chars:
            return True
        return lines is not None and text.count("\n") + 1 > lines

    def result(self) -> tuple[str, str | None]:
        lines = [line.rstrip() for line in "".join(self.parts).split("\n")]
        text = _BLANKS.sub("\n\n", "\n".join(lines)).strip("\n")
        title = _SPACES.sub(" ", "".join(self.title_parts)).strip() or None
        return text, title


def html_to_text(html: str, base_url: str | None = None, include_links: bool = False,
                 stop_after: tuple[int | None, int | None] | None = None,
                 ) -> tuple[str, str | None, bool]:
    """(readable text, page title or None, whether the whole document was read).

    ``stop_after=(characters, lines)`` stops parsing once the text holds more than that
    many characters or lines (None: no limit of that kind): html.parser is pure Python,
    and a model that asked for the first 5000 characters of a 5 MB page should not wait
    for all of it to be parsed.
    """
    extractor = _Extractor(base_url, include_links)
    chars, lines = stop_after if stop_after is not None else (None, None)
    complete = True
    try:
        if chars is None and lines is None:
            extractor.feed(html)
        else:
            for start in range(0, len(html), _FEED_SIZE):
                extractor.feed(html[start:start + _FEED_SIZE])
                if start + _FEED_SIZE < len(html) and extractor.has_more_than(chars, lines):
                    complete = False
                    break
        extractor.close()
    except Exception:  # html.parser is lenient; fall back to stripping tags if it gives up
        text = re.sub(r"<[^>]*>", " ", html)
        return _SPACES.sub(" ", text).strip(), None, True
    text, title = extractor.result()
    return text, title, complete
