"""nhttpd speaks HTTP/1.1: documents with the right bytes, HEAD, keep-alive, pipelining, and
the right status for each kind of bad request (apps/nhttpd/http.h lists them)."""
import hashlib
import subprocess

import pytest

pytestmark = pytest.mark.boot


def curl(url, *args):
    return subprocess.run(["curl", "-sS", "--max-time", "120", *args, url],
                          capture_output=True, timeout=180)


def test_curl_fetches_the_index(nhttpd):
    """Does curl get the paper's 175-byte index, byte for byte, at / and /index.html?"""
    want = (nhttpd.docroot / "index.html").read_bytes()
    assert len(want) == 175
    for path in ("/", "/index.html"):
        r = curl(nhttpd.base_url + path, "-w", "\n%{http_code} %{content_type}")
        body, _, tail = r.stdout.rpartition(b"\n")
        assert r.returncode == 0, r.stderr
        assert body == want and tail == b"200 text/html"


def test_curl_fetches_the_large_file(nhttpd):
    """Does a 1 MiB file arrive complete and unchanged?"""
    want = (nhttpd.docroot / "large.bin").read_bytes()
    r = curl(nhttpd.base_url + "/large.bin")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout) == len(want)
    assert hashlib.sha256(r.stdout).digest() == hashlib.sha256(want).digest()


def test_head_has_headers_but_no_body(nhttpd):
    """Does HEAD answer GET's headers without the body, keeping the connection usable?"""
    raw = b"HEAD /index.html HTTP/1.1\r\nHost: t\r\n\r\nGET /index.html HTTP/1.1\r\nHost: t\r\n\r\n"
    head, get = nhttpd.exchange(raw, count=2, head_only=(0,))
    assert head.status == 200 and head.headers["content-length"] == "175"
    assert head.body == b""
    assert get.status == 200 and get.body == (nhttpd.docroot / "index.html").read_bytes()


def test_missing_is_404_and_keeps_the_connection(nhttpd):
    """Is a missing document a 404 after which the same connection still serves?"""
    raw = b"GET /no/such/file HTTP/1.1\r\nHost: t\r\n\r\nGET / HTTP/1.1\r\nHost: t\r\n\r\n"
    missing, index = nhttpd.exchange(raw, count=2)
    assert missing.status == 404 and index.status == 200


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"])
def test_known_methods_are_405(nhttpd, method):
    """Are methods nhttpd does not allow a 405 naming what is allowed?"""
    raw = (f"{method} / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody"
           "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
    refused, after = nhttpd.exchange(raw.encode(), count=2)
    assert refused.status == 405 and refused.headers["allow"] == "GET, HEAD"
    assert after.status == 200  # the body was skipped, not taken for the next request


def test_unknown_method_is_501(nhttpd):
    assert nhttpd.get("/", method="BREW").status == 501


def test_long_uri_is_414(nhttpd):
    """Is a request-target over 2048 bytes a 414, and the server fine after it?"""
    assert nhttpd.get("/" + "a" * 5000).status == 414
    assert nhttpd.alive()


def test_huge_header_is_431(nhttpd):
    """Is a head over 8 KiB a 431, whether it is one field or many?"""
    assert nhttpd.get("/", headers=f"X-Big: {'v' * 10000}\r\n").status == 431
    many = "".join(f"X-{i}: {i}\r\n" for i in range(100))
    assert nhttpd.get("/", headers=many).status == 431
    assert nhttpd.alive()


def test_huge_body_is_413(nhttpd):
    """Is a request body nhttpd would have to skip megabytes of a 413 that closes?"""
    r = nhttpd.exchange(b"GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n",
                        count=2)
    assert r[0].status == 413 and r[0].headers["connection"] == "close" and r[1] is None


@pytest.mark.parametrize("raw", [
    b"GET\r\n\r\n",
    b"GET / HTTP/1.1\r\n\r\n",                    # no Host
    b"GET / HTTP/1.1\r\nHost : t\r\n\r\n",        # space before the colon
    b"GET / HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n",
    b"GET /%zz HTTP/1.1\r\nHost: t\r\n\r\n",
    b"GET /../etc/passwd HTTP/1.1\r\nHost: t\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",  # a TLS client hello
], ids=["no-target", "no-host", "space-colon", "obs-fold", "bad-escape", "above-root", "tls"])
def test_malformed_is_400(nhttpd, raw):
    assert nhttpd.exchange(raw)[0].status == 400


def test_http2_is_505(nhttpd):
    assert nhttpd.exchange(b"GET / HTTP/2.0\r\nHost: t\r\n\r\n")[0].status == 505


def test_pipelined_burst_answered_in_order(nhttpd):
    """Are 40 requests sent in one write answered in order, big bodies included?"""
    paths = ["/", "/missing", "/index.html", "/large.bin", "/nom/stats"] * 8
    raw = b"".join(f"GET {p} HTTP/1.1\r\nHost: t\r\n\r\n".encode() for p in paths)
    responses = nhttpd.exchange(raw, count=len(paths))
    index = (nhttpd.docroot / "index.html").read_bytes()
    large = (nhttpd.docroot / "large.bin").read_bytes()
    for path, r in zip(paths, responses):
        assert r is not None, path
        if path in ("/", "/index.html"):
            assert r.status == 200 and r.body == index
        elif path == "/large.bin":
            assert r.status == 200 and r.body == large
        elif path == "/missing":
            assert r.status == 404
        else:
            assert r.status == 200 and r.headers["content-type"] == "application/json"


def test_http10_closes_unless_asked(nhttpd):
    """Does HTTP/1.0 get one response and a close, or keep-alive when it asks for it?"""
    r = nhttpd.exchange(b"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n", count=2)
    assert r[0].status == 200 and r[1] is None
    raw = b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET / HTTP/1.0\r\n\r\n"
    r = nhttpd.exchange(raw, count=2)
    assert r[0].headers["connection"] == "keep-alive" and r[1].status == 200


def test_connection_close_is_honoured(nhttpd):
    r = nhttpd.exchange(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                        b"GET / HTTP/1.1\r\nHost: t\r\n\r\n", count=2)
    assert r[0].headers["connection"] == "close" and r[1] is None


def test_each_response_gets_its_own_head(nhttpd):
    """Is every head right when responses alternate (conn.c reuses the last head it made when
    status, type, length and connection fields are the same)? Same document over keep-alive
    1.1, 1.0 keep-alive and 1.1 close, with other documents and errors in between."""
    index = (nhttpd.docroot / "index.html").read_bytes()
    large = (nhttpd.docroot / "large.bin").read_bytes()
    paths = ["/index.html", "/index.html", "/large.bin", "/missing", "/index.html"]
    raw = b"".join(f"GET {p} HTTP/1.1\r\nHost: t\r\n\r\n".encode() for p in paths)
    r = nhttpd.exchange(raw, count=len(paths))
    for path, resp in zip(paths, r):
        body = {"/index.html": index, "/large.bin": large}.get(path)
        assert resp.status == (200 if body is not None else 404), path
        assert "connection" not in resp.headers, path
        if body is not None:
            assert int(resp.headers["content-length"]) == len(body) and resp.body == body
    r = nhttpd.exchange(b"GET /index.html HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                        b"GET /index.html HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
                        count=2)
    assert r[0].headers["connection"] == "keep-alive" and r[0].body == index
    assert r[1].headers["connection"] == "close" and r[1].body == index
    r = nhttpd.exchange(b"GET /index.html HTTP/1.1\r\nHost: t\r\n\r\n", count=1)
    assert "connection" not in r[0].headers and r[0].body == index
