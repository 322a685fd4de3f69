"""GetUrl against a real HTTP server on 127.0.0.1 (see conftest.py for the routes)."""

from __future__ import annotations

import pytest
from conftest import LoopbackServer, gzip_bomb

from janito_core.testing import ToolsetTester


@pytest.fixture
def system(janito: ToolsetTester) -> ToolsetTester:
    janito.load("system", privileges="r")
    return janito


def test_html_becomes_markdown(system: ToolsetTester, http_server: LoopbackServer) -> None:
    url = http_server.base + "/page"
    result = system.call("GetUrl", url=url)
    assert result["success"] is True
    assert result["url"] == url
    assert result["final_url"] == url
    assert result["status_code"] == 200
    assert result["content_type"] == "text/html"
    assert result["title"] == "Test page"
    content = result["content"]
    assert content == (
        "# Welcome\n\nFirst paragraph with **bold** text\n"
        f"and a [relative link]({http_server.base}/next).\n\n- apple\n- pear\n\n"
        "```\nkeep   this\n  layout\n```\n\nCafé & crème")
    assert "hidden" not in content and "color: red" not in content
    assert result["truncated"] is False
    assert result["download_truncated"] is False
    assert result["redirects"] == []
    assert result["max_length"] == 5000 and result["max_lines"] == 200


def test_links_can_be_left_out(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/page", include_links=False)
    assert result["include_links"] is False
    assert "raw" not in result  # only inputs that differ from their defaults are echoed
    assert "and a relative link." in result["content"] and "/next" not in result["content"]


def test_raw_html(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/page", raw=True, max_length=None)
    assert result["content"].startswith("<!DOCTYPE html>")
    assert "title" not in result


def test_plain_text_and_json_pass_through(system: ToolsetTester, http_server: LoopbackServer) -> None:
    data = system.call("GetUrl", url=http_server.base + "/json")
    assert data["content"] == '{"answer": 42}'
    assert data["content_type"] == "application/json"
    bare = system.call("GetUrl", url=http_server.base + "/no-type")
    assert bare["content"] == "plain words without a content type"
    assert bare["content_type"] is None


def test_charsets(system: ToolsetTester, http_server: LoopbackServer) -> None:
    latin = system.call("GetUrl", url=http_server.base + "/latin1")
    assert latin["content"] == "naïve café"
    meta = system.call("GetUrl", url=http_server.base + "/meta-charset")
    assert meta["content"] == "\u201cquoted\u201d"


def test_max_lines_truncation_is_marked(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/text", max_lines=3, max_length=None)
    assert result["success"] is True
    assert result["truncated"] is True
    assert result["content"] == (
        "line 1\nline 2\nline 3\n[... truncated: showing characters 0-20 of 8893 "
        "(max_lines=3); call GetUrl again with start_index=21 for the rest]")
    assert result["lines_returned"] == 3
    assert result["total_lines"] == 1001
    assert result["next_start_index"] == 21


def test_max_length_truncation_is_marked(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/text", max_length=10, max_lines=None)
    assert result["content"] == (
        "line 1\nlin\n[... truncated: showing characters 0-10 of 8893 (max_length=10); "
        "call GetUrl again with start_index=10 for the rest]")
    assert result["truncated"] is True
    assert result["total_length"] == sum(len(f"line {i}\n") for i in range(1, 1001))


def test_defaults_cut_long_content(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/text")
    assert result["truncated"] is True
    assert len(result["content"]) < 5200


def test_large_html_page_is_converted_only_as_far_as_needed(
        system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/big-html", max_lines=5)
    assert result["success"] is True
    assert result["content"] == (
        "Paragraph number 0.\n\nParagraph number 1.\n\nParagraph number 2."
        "\n[... truncated: showing characters 0-61 of more (max_lines=5); call GetUrl again "
        "with start_index=62 for the rest]"
    )
    assert result["truncated"] is True
    assert result["total_lines"] is None and result["total_length"] is None
    assert result["content_length"] > 500_000
    later = system.call("GetUrl", url=http_server.base + "/big-html", start_index=63,
                        max_lines=1)
    assert later["content"].startswith("Paragraph number 3.\n[... truncated: showing characters "
                                       "63-82 of more")
    assert later["start_index"] == 63 and later["next_start_index"] == 83
    whole = system.call("GetUrl", url=http_server.base + "/big-html", max_lines=None,
                        max_length=None)
    assert whole["total_lines"] == 2 * 20_000 - 1
    assert whole["truncated"] is True  # the dispatch result cap cut it, and says so


def test_redirect_is_followed(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/redirect")
    assert result["success"] is True
    assert result["final_url"] == http_server.base + "/page"
    assert result["redirects"] == [{"status_code": 302, "url": http_server.base + "/page"}]
    assert result["title"] == "Test page"
    absolute = system.call("GetUrl", url=http_server.base + "/redirect-absolute")
    assert absolute["final_url"].endswith("/text")
    assert absolute["redirects"][0]["status_code"] == 301


def test_redirect_chain_within_the_limit(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/chain/10")
    assert result["success"] is True
    assert result["content"] == "end of the chain"
    assert len(result["redirects"]) == 10


def test_too_many_redirects(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/chain/11")
    assert result["success"] is False
    assert result["error_type"] == "too_many_redirects"
    assert len(http_server.paths) == 11


def test_redirect_loop(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/loop-a")
    assert result["success"] is False
    assert result["error_type"] == "redirect_loop"
    assert http_server.paths == ["/loop-a", "/loop-b"]


def test_redirect_not_followed_when_asked(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/redirect", follow_redirects=False)
    assert result["success"] is False
    assert result["error_type"] == "redirect_not_followed"
    assert result["location"] == http_server.base + "/page"
    assert result["status_code"] == 302


def test_redirect_to_a_file_url_is_refused(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/to-file")
    assert result["success"] is False
    assert result["error_type"] == "invalid_redirect"
    assert result["location"] == "file:///etc/passwd"
    assert "root:" not in str(result)


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi", "javascript:alert(1)",
     "/relative/path", "127.0.0.1/page", "http://", "http://exa mple.com/", "", "   ",
     "http://127.0.0.1:99999/", "gopher://127.0.0.1:70/"],
)
def test_only_http_urls_are_fetched(system: ToolsetTester, url: str) -> None:
    result = system.call("GetUrl", url=url)
    assert result["success"] is False
    assert result["error_type"] == "invalid_url"
    assert result["url"] == url


def test_http_404_is_a_clear_error(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/not-found")
    assert result["success"] is False
    assert result["error_type"] == "http_error"
    assert result["status_code"] == 404
    assert "404" in result["error"]
    assert "Nothing here" in result["content"]


def test_http_500_is_a_clear_error(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/broken")
    assert result["error_type"] == "http_error"
    assert result["status_code"] == 500
    assert "server error" in result["error"]
    assert result["content"] == "database on fire"


def test_untrusted_certificate_is_an_ssl_error(system: ToolsetTester,
                                               https_server: LoopbackServer) -> None:
    assert https_server.base.startswith("https://")
    result = system.call("GetUrl", url=https_server.base + "/page")
    assert result["success"] is False
    assert result["error_type"] == "ssl_error"
    assert https_server.paths == []


def test_https_with_a_trusted_certificate(system: ToolsetTester, https_server: LoopbackServer,
                                          certificate: tuple[str, str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", certificate[0])
    result = system.call("GetUrl", url=https_server.base + "/redirect")
    assert result["success"] is True, result
    assert result["final_url"] == https_server.base + "/page"
    assert result["title"] == "Test page"


def test_connection_refused(system: ToolsetTester, free_port: int) -> None:
    result = system.call("GetUrl", url=f"http://127.0.0.1:{free_port}/")
    assert result["success"] is False
    assert result["error_type"] == "connection_refused"
    assert str(free_port) in result["error"]


def test_dns_failure(system: ToolsetTester) -> None:
    # A name with a comma is not a valid host name: the resolver fails without asking
    # any DNS server, so this stays off the network.
    result = system.call("GetUrl", url="http://no,such,host.invalid/")
    assert result["success"] is False
    assert result["error_type"] == "dns_failure"
    assert "could not be resolved" in result["error"]


def test_server_that_hangs_up(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/hang-up")
    assert result["success"] is False
    assert result["error_type"] == "connection_failed"


def test_slow_answer_times_out(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/slow", timeout=0.5)
    assert result["success"] is False
    assert result["error_type"] == "timeout"
    assert result["timeout"] == 0.5


def test_slow_download_times_out(system: ToolsetTester, http_server: LoopbackServer) -> None:
    # the server sends one byte every 50 ms: each read is quick, the whole (50 s) too slow
    # A first call imports httpx and builds the TLS context inside its deadline, which on
    # a loaded machine takes longer than the half second: a warm-up call does that first.
    system.call("GetUrl", url="http://127.0.0.1:1/", timeout=1)
    result = system.call("GetUrl", url=http_server.base + "/drip", timeout=0.5)
    assert result["success"] is False
    assert result["error_type"] == "timeout", result
    # A timeout met in the body says how much of it came; how much (even whether the head
    # came in time) is the scheduler's to decide on a loaded machine, but never all of it.
    if "bytes_received" in result:
        assert 0 <= result["bytes_received"] < 1000, result


def test_size_cap_stops_the_download(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/huge", max_bytes=50_000,
                         max_length=None, max_lines=None, timeout=30)
    assert result["success"] is True
    assert result["download_truncated"] is True
    assert result["content_length"] == 50_000
    assert result["content"].endswith("[... download stopped at 50000 bytes (max_bytes); "
                                      "the rest was not fetched]")
    assert result["content"].startswith("0123456789abcdef")
    http_server.release.wait(0)  # the server keeps trying to send until it notices
    deadline_sent = _sent_after_close(http_server)
    assert deadline_sent < 1024 * 1024 * 1024


def _sent_after_close(server: LoopbackServer) -> int:
    import time

    end = time.monotonic() + 20
    while not server.huge_sent and time.monotonic() < end:
        time.sleep(0.02)
    assert server.huge_sent, "the server never noticed the client went away"
    return server.huge_sent[0]


def test_chunked_transfer(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/chunked")
    assert result["content"] == "".join(f"chunk {i}\n" for i in range(1, 6))


def test_gzip_body_is_inflated(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/gzip")
    assert result["success"] is True
    assert result["content"] == "compressed words\n" * 3


def test_gzip_bomb_is_capped(system: ToolsetTester, http_server: LoopbackServer) -> None:
    assert len(gzip_bomb()) < 100_000
    result = system.call("GetUrl", url=http_server.base + "/gzip-bomb", max_bytes=200_000)
    assert result["success"] is True
    assert result["download_truncated"] is True
    assert result["content_length"] == 200_000


def test_unknown_content_encoding(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/brotli")
    assert result["success"] is False
    assert result["error_type"] == "unsupported_content_type"


def test_binary_content_is_refused(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/binary")
    assert result["success"] is False
    assert result["error_type"] == "unsupported_content_type"
    assert result["content_type"] == "application/octet-stream"


def test_huge_timeout_is_accepted(system: ToolsetTester, http_server: LoopbackServer) -> None:
    result = system.call("GetUrl", url=http_server.base + "/json", timeout=1e300)
    assert result["success"] is True


def test_invalid_numbers(system: ToolsetTester, http_server: LoopbackServer) -> None:
    url = http_server.base + "/page"
    for args in ({"max_length": 0}, {"max_lines": -1}, {"timeout": 0}, {"max_bytes": 0}):
        result = system.call("GetUrl", {"url": url, **args})
        assert result["success"] is False
        assert result["error_type"] == "invalid_arguments", args
    assert http_server.paths == []


def test_needs_read_privilege(janito: ToolsetTester, http_server: LoopbackServer) -> None:
    janito.load("system", privileges="x")
    result = janito.call("GetUrl", url=http_server.base + "/page")
    assert result["error_type"] == "permission_denied"
    assert http_server.paths == []


# -- janito 4.50's check_llms_txt and threshold ---------------------------------------------

LLMS = b"# Test site\n\n> For models.\n\n## Docs\n\n- [Page](/page): the page\n"


@pytest.mark.parametrize("where", ["/llms.txt", "/.well-known/llms.txt"])
def test_check_llms_txt_returns_the_sites_llms_txt(system: ToolsetTester,
                                                   http_server: LoopbackServer,
                                                   where: str) -> None:
    http_server.files[where] = (200, LLMS, "text/plain; charset=utf-8")
    url = http_server.base + "/page"
    result = system.call("GetUrl", url=url, check_llms_txt=True)
    assert result["success"] is True, result
    assert (result["llms_txt"], result["url"]) == (True, url)
    assert result["final_url"] == http_server.base + where
    assert result["content"] == LLMS.decode()  # text as it is, never turned into Markdown
    asked = ["/llms.txt", "/.well-known/llms.txt"]
    assert http_server.paths == asked[:asked.index(where) + 1]  # the page itself is not fetched


def test_check_llms_txt_falls_back_to_the_page(system: ToolsetTester,
                                               http_server: LoopbackServer) -> None:
    # a site that answers every path with an HTML page has no llms.txt
    http_server.files["/.well-known/llms.txt"] = (200, b"<html><body>Home</body></html>",
                                                  "text/html")
    url = http_server.base + "/page"
    result = system.call("GetUrl", url=url, check_llms_txt=True)
    assert result["success"] is True and result["llms_txt"] is False
    assert result["final_url"] == url and result["title"] == "Test page"
    assert http_server.paths == ["/llms.txt", "/.well-known/llms.txt", "/page"]
    # asking for the llms.txt itself looks for nothing else
    http_server.paths.clear()
    http_server.files["/llms.txt"] = (200, LLMS, "text/plain")
    itself = system.call("GetUrl", url=http_server.base + "/llms.txt", check_llms_txt=True)
    assert itself["llms_txt"] is False and itself["content"] == LLMS.decode()
    assert http_server.paths == ["/llms.txt"]
    assert "llms_txt" not in system.call("GetUrl", url=url)  # only when asked


def test_threshold_is_taken_and_nothing_is_written(system: ToolsetTester,
                                                   http_server: LoopbackServer) -> None:
    """janito 4.50 wrote content longer than threshold to a temporary file; here the
    content comes inline, a page at a time, and threshold changes nothing."""
    url = http_server.base + "/big-html"
    plain = system.call("GetUrl", url=url, max_length=1000)
    for threshold in (10, None):
        result = system.call("GetUrl", url=url, max_length=1000, threshold=threshold)
        assert result["success"] is True
        assert result["content"] == plain["content"]
        assert result["next_start_index"] == plain["next_start_index"]
        assert "tmp_filename" not in result and "too_big" not in result
    assert system.call("GetUrl", url=url, threshold=10)["threshold"] == 10
