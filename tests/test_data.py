"""The download stage against a local HTTP server: sources in order, verification, atomicity, messages."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import logging
import threading
import time
from functools import partial
from pathlib import Path

import pytest

from vhct.data import (
    MIRROR_ENV,
    DataFile,
    DownloadError,
    VerificationError,
    fetch_all,
    fetch_file,
    verify_file,
)

PAYLOAD = bytes(range(256)) * 40
CONTENT = b"IDX-like content " * 500
SLOW_SECONDS = 1.0


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory; ``/short/<name>`` promises more bytes than it sends; ``/slow`` stalls."""

    requests: list[str]

    def log_message(self, format, *args):  # noqa: A002 (signature of the base class)
        pass

    def do_GET(self):
        self.requests.append(self.path)
        if self.path.startswith("/short/"):
            body = (Path(self.directory) / self.path.removeprefix("/short/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body) * 2))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = True
            return
        if self.path == "/slow":
            time.sleep(SLOW_SECONDS)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 (ephemeral port) serving ``tmp_path/www``; yields (base URL, www, log)."""
    www = tmp_path / "www"
    www.mkdir()
    log: list[str] = []
    handler = type("H", (Handler,), {"requests": log})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(www)))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", www, log
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture
def dest(tmp_path, monkeypatch):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    folder = tmp_path / "dest"
    folder.mkdir()
    return folder


def all_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*"))


def test_success_from_url(server, dest):
    base, www, _ = server
    (www / "a.bin").write_bytes(PAYLOAD)
    spec = {"path": "sub/a.bin", "urls": [f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    got = fetch_file(spec, dest)
    assert got == dest / "sub" / "a.bin"
    assert got.read_bytes() == PAYLOAD
    assert all_files(dest) == [dest / "sub", got]  # no temp files left


def test_recompressed_gzip_accepted_by_content_checksum(server, dest):
    base, www, _ = server
    official = gzip.compress(CONTENT, compresslevel=9, mtime=0)
    recompressed = gzip.compress(CONTENT, compresslevel=1, mtime=12345)
    assert official != recompressed
    (www / "c.gz").write_bytes(recompressed)
    spec = DataFile(path="c.gz", urls=(f"{base}/c.gz",), content_sha256=sha256(CONTENT), md5=md5(official))
    got = fetch_file(spec, dest)
    assert gzip.decompress(got.read_bytes()) == CONTENT


def test_gzip_accepted_by_md5_of_gz_bytes(server, dest):
    base, www, _ = server
    gz = gzip.compress(CONTENT, mtime=0)
    (www / "c.gz").write_bytes(gz)
    got = fetch_file({"path": "c.gz", "urls": [f"{base}/c.gz"], "md5": md5(gz)}, dest)
    assert got.read_bytes() == gz


def test_checksum_mismatch_rejected(server, dest):
    base, www, _ = server
    (www / "a.bin").write_bytes(PAYLOAD[:-1] + b"x")
    spec = {"path": "a.bin", "urls": [f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError) as err:
        fetch_file(spec, dest)
    msg = str(err.value)
    assert "checksum mismatch" in msg
    assert sha256(PAYLOAD) in msg and sha256(PAYLOAD[:-1] + b"x") in msg
    assert all_files(dest) == []


def test_truncated_file_rejected(server, dest):
    base, www, _ = server
    (www / "a.bin").write_bytes(PAYLOAD[: len(PAYLOAD) // 2])
    spec = {"path": "a.bin", "urls": [f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch_file(spec, dest)
    assert all_files(dest) == []


def test_truncated_gzip_rejected_even_if_its_bytes_match(server, dest):
    base, www, _ = server
    gz = gzip.compress(PAYLOAD * 4, mtime=0)
    cut = gz[: len(gz) - 20]
    (www / "t.gz").write_bytes(cut)
    # a byte checksum that the truncated file does match: decompression must still reject it
    spec = {"path": "t.gz", "urls": [f"{base}/t.gz"], "md5": md5(cut), "content_sha256": sha256(PAYLOAD * 4)}
    with pytest.raises(DownloadError, match="not a complete gzip file"):
        fetch_file(spec, dest)
    assert all_files(dest) == []


def test_short_transfer_rejected(server, dest):
    base, www, _ = server
    (www / "a.bin").write_bytes(PAYLOAD)
    spec = {"path": "a.bin", "urls": [f"{base}/short/a.bin"], "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError, match=r"short/a\.bin"):
        fetch_file(spec, dest)
    assert all_files(dest) == []


def test_timeout_reported(server, dest):
    base, _, _ = server
    spec = {"path": "a.bin", "urls": [f"{base}/slow"], "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError, match="timeout"):
        fetch_file(spec, dest, timeout=SLOW_SECONDS / 5)
    assert all_files(dest) == []


def test_404_falls_through_to_next_url(server, dest, caplog):
    base, www, log = server
    (www / "a.bin").write_bytes(PAYLOAD)
    spec = {"path": "a.bin", "urls": [f"{base}/missing.bin", f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    with caplog.at_level(logging.INFO, logger="vhct.data"):
        got = fetch_file(spec, dest)
    assert got.read_bytes() == PAYLOAD
    assert log == ["/missing.bin", "/a.bin"]
    assert "HTTP 404" in caplog.text and f"{base}/a.bin" in caplog.text


def test_mirror_argument_used_after_urls_fail(server, dest, tmp_path):
    base, _, _ = server
    mirror = tmp_path / "mirror"
    (mirror / "landmine").mkdir(parents=True)
    (mirror / "landmine" / "L.mat").write_bytes(PAYLOAD)
    spec = {"path": "landmine/L.mat", "urls": [f"{base}/nope"], "sha256": sha256(PAYLOAD)}
    got = fetch_file(spec, dest, mirror=mirror)
    assert got == dest / "landmine" / "L.mat" and got.read_bytes() == PAYLOAD


def test_mirror_from_environment(dest, tmp_path, monkeypatch):
    mirror = tmp_path / "envmirror"
    mirror.mkdir()
    (mirror / "a.bin").write_bytes(PAYLOAD)
    spec = {"path": "a.bin", "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError, match="no URL given and no mirror"):
        fetch_file(spec, dest)
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    assert fetch_file(spec, dest).read_bytes() == PAYLOAD


def test_env_mirror_tried_after_config_mirror(dest, tmp_path, monkeypatch):
    empty, full = tmp_path / "empty", tmp_path / "full"
    empty.mkdir()
    full.mkdir()
    (full / "a.bin").write_bytes(PAYLOAD)
    monkeypatch.setenv(MIRROR_ENV, str(full))
    assert fetch_file({"path": "a.bin", "sha256": sha256(PAYLOAD)}, dest, mirror=empty).is_file()


def test_failure_leaves_nothing_and_message_names_every_source(server, dest, tmp_path):
    base, www, _ = server
    (www / "bad.bin").write_bytes(b"wrong")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    urls = [f"{base}/gone.bin", f"{base}/bad.bin"]
    spec = {"path": "mnist/x.bin", "urls": urls, "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError) as err:
        fetch_file(spec, dest, mirror=mirror)
    msg = str(err.value)
    assert "mnist/x.bin" in msg
    assert f"{urls[0]}: HTTP 404" in msg
    assert f"{urls[1]}: checksum mismatch" in msg
    assert f"mirror {mirror} (config): missing in mirror" in msg
    assert f"{MIRROR_ENV}=/path/to/mirror" in msg
    assert all_files(dest) == []  # not even the created "mnist/" folder


def test_present_verified_file_kept_without_download(server, dest):
    base, _, log = server
    (dest / "a.bin").write_bytes(PAYLOAD)
    spec = {"path": "a.bin", "urls": [f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    assert fetch_file(spec, dest).read_bytes() == PAYLOAD
    assert log == []


def test_present_corrupt_file_replaced(server, dest):
    base, www, _ = server
    (www / "a.bin").write_bytes(PAYLOAD)
    (dest / "a.bin").write_bytes(b"corrupt")
    spec = {"path": "a.bin", "urls": [f"{base}/a.bin"], "sha256": sha256(PAYLOAD)}
    assert fetch_file(spec, dest).read_bytes() == PAYLOAD


def test_present_corrupt_file_removed_when_no_source_works(server, dest):
    base, _, _ = server
    (dest / "a.bin").write_bytes(b"corrupt")
    spec = {"path": "a.bin", "urls": [f"{base}/gone"], "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError, match="failed verification and was removed"):
        fetch_file(spec, dest)
    assert all_files(dest) == []


def test_fetch_all_reports_every_failed_file(dest, tmp_path):
    mirror = tmp_path / "m"
    mirror.mkdir()
    (mirror / "ok.bin").write_bytes(PAYLOAD)
    specs = [
        {"path": "ok.bin", "sha256": sha256(PAYLOAD)},
        {"path": "no1.bin", "sha256": sha256(b"1")},
        {"path": "no2.bin", "sha256": sha256(b"2")},
    ]
    with pytest.raises(DownloadError) as err:
        fetch_all(specs, dest, mirror=mirror)
    assert "no1.bin" in str(err.value) and "no2.bin" in str(err.value)
    assert [p.name for p in all_files(dest)] == ["ok.bin"]


def test_verify_file(tmp_path):
    path = tmp_path / "a.bin"
    spec = DataFile(path="a.bin", sha256=sha256(PAYLOAD))
    with pytest.raises(VerificationError, match="does not exist"):
        verify_file(path, spec)
    path.write_bytes(PAYLOAD)
    verify_file(path, spec)
    path.write_bytes(PAYLOAD + b"\0")
    with pytest.raises(VerificationError, match="checksum mismatch"):
        verify_file(path, spec)


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ({"path": "../a.bin", "sha256": "0" * 64}, "'path'"),
        ({"path": "/abs/a.bin", "sha256": "0" * 64}, "'path'"),
        ({"urls": [], "sha256": "0" * 64}, "'path'"),
        ({"path": "a.bin"}, "at least one of"),
        ({"path": "a.bin", "sha256": "xyz"}, "'sha256'"),
        ({"path": "a.bin", "md5": "0" * 64}, "'md5'"),
        ({"path": "a.bin", "content_sha256": "0" * 64}, "'content_sha256'"),
        ({"path": "a.bin", "sha256": "0" * 64, "urls": "http://x/a.bin"}, "'urls'"),
        ({"path": "a.bin", "sha256": "0" * 64, "urls": ["gopher://x/a.bin"]}, "'urls'"),
        ({"path": "a.bin", "sha256": "0" * 64, "sha1": "0" * 40}, "sha1"),
    ],
)
def test_bad_spec_named(spec, named, dest):
    with pytest.raises(ValueError, match=named):
        fetch_file(spec, dest)


def test_bad_timeout_named(dest):
    with pytest.raises(ValueError, match="timeout"):
        fetch_file({"path": "a.bin", "sha256": "0" * 64}, dest, timeout=0)
