"""The download stage against a local HTTP server: sources in order, verification, atomicity, messages;
verification before use (stamps), recovery of a corrupted data file, and the loaders' messages."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import json
import logging
import os
import stat
import threading
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from support import run_job_of, run_spec, write_landmine_mat, write_mnist_dir

from vhct.objectives.landmine import LandmineSVM
from vhct.objectives.mnist import IdxFormatError, read_idx_images
from vhct.pipeline import data as vd
from vhct.pipeline.data import (
    MIRROR_ENV,
    DataFile,
    DownloadError,
    VerificationError,
    check_stamp,
    fetch_file,
    verify,  # where compute_digests is looked up
    verify_file,
)
from vhct.pipeline.jobs import data_job

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
    with caplog.at_level(logging.INFO, logger="vhct.pipeline.data"):
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


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_a_mirror_that_is_no_directory_is_named_as_such(dest, tmp_path, monkeypatch, kind):
    """VHCT_DATA_MIRROR naming a file (or nothing) says so, not "missing in mirror (<file>/<path>)"."""
    mirror = tmp_path / "mirror.txt"
    if kind == "file":
        mirror.write_text("not a folder")
    monkeypatch.setenv(MIRROR_ENV, str(mirror))
    spec = {"path": "landmine/L.mat", "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError) as info:
        fetch_file(spec, dest)
    message = str(info.value)
    expected = f"{mirror} is not a directory" if kind == "file" else f"no such directory {mirror}"
    assert f"mirror {mirror} ({MIRROR_ENV}): {expected}" in message
    assert "missing in mirror" not in message
    assert all_files(dest) == []


def test_env_mirror_tried_after_config_mirror(dest, tmp_path, monkeypatch):
    empty, full = tmp_path / "empty", tmp_path / "full"
    empty.mkdir()
    full.mkdir()
    (full / "a.bin").write_bytes(PAYLOAD)
    monkeypatch.setenv(MIRROR_ENV, str(full))
    assert fetch_file({"path": "a.bin", "sha256": sha256(PAYLOAD)}, dest, mirror=empty).is_file()


@pytest.fixture
def locked(tmp_path, monkeypatch):
    """A mirror whose ``landmine`` folder cannot be read (mode 000). Root reads it anyway, so as root
    every stat below it fails with EACCES the way it does for other users (simulated)."""
    mirror = tmp_path / "locked"
    folder = mirror / "landmine"
    folder.mkdir(parents=True)
    (folder / "L.mat").write_bytes(PAYLOAD)
    folder.chmod(0)
    if os.geteuid() == 0:
        real_stat = Path.stat

        def denied(self, *args, **kwargs):
            if folder in self.parents:
                raise PermissionError(13, "Permission denied", str(self))
            return real_stat(self, *args, **kwargs)

        monkeypatch.setattr(Path, "stat", denied)
    yield mirror
    folder.chmod(0o755)


def test_an_unreadable_mirror_folder_is_a_failed_source_not_a_traceback(dest, tmp_path, monkeypatch, locked):
    spec = {"path": "landmine/L.mat", "sha256": sha256(PAYLOAD)}
    with pytest.raises(DownloadError) as info:
        fetch_file(spec, dest, mirror=locked)
    message = str(info.value)
    assert (
        f"mirror {locked} (config): cannot read {locked / 'landmine' / 'L.mat'} (Permission denied)"
        in message
    )
    assert not (dest / "landmine").exists()
    # the next source is still tried
    full = tmp_path / "full"
    (full / "landmine").mkdir(parents=True)
    (full / "landmine" / "L.mat").write_bytes(PAYLOAD)
    monkeypatch.setenv(MIRROR_ENV, str(full))
    assert fetch_file(spec, dest, mirror=locked).read_bytes() == PAYLOAD


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
        ({"path": "./a.bin", "sha256": "0" * 64}, "'path'"),
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


# ----------------------------------------------------------------------------- file mode


@pytest.fixture
def umask():
    """Set the process umask for one test (restored after)."""
    previous = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_downloaded_file_mode_follows_the_umask(dest, tmp_path, umask, mask, mode):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.bin").write_bytes(PAYLOAD)
    umask(mask)
    got = fetch_file({"path": "a.bin", "sha256": sha256(PAYLOAD)}, dest, mirror=mirror)
    assert stat.S_IMODE(got.stat().st_mode) == mode
    if mask == 0o022:
        assert got.stat().st_mode & stat.S_IRGRP  # the group can read the data


def test_temporary_files_of_an_interrupted_fetch_are_removed(dest, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.bin").write_bytes(PAYLOAD)
    stale = dest / ".a.bin.0123abcd.tmp"
    stale.write_bytes(PAYLOAD[:10])
    other = dest / ".b.bin.0123abcd.tmp"  # another file's: left alone
    other.write_bytes(b"x")
    fetch_file({"path": "a.bin", "sha256": sha256(PAYLOAD)}, dest, mirror=mirror)
    assert all_files(dest) == [other, dest / "a.bin"]


# ----------------------------------------------------------------------------- verification before use


def corrupt(path: Path, how: str) -> None:
    """Damage a file in place: random bytes of the same size, or cut to half its size."""
    size = path.stat().st_size
    if how == "random":
        path.write_bytes(np.random.default_rng(1).bytes(size))
    else:
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)


@pytest.fixture
def landmine(tmp_path, monkeypatch):
    """A Landmine fixture in a mirror, its spec, and a data dir holding a verified copy and stamp."""
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    mirror = tmp_path / "mirror"
    (mirror / "landmine").mkdir(parents=True)
    source = write_landmine_mat(mirror / "landmine" / "LandmineData.mat")
    spec = {"path": "landmine/LandmineData.mat", "urls": [], "sha256": sha256(source.read_bytes())}
    data_dir = tmp_path / "data"
    path, stamp = data_dir / spec["path"], data_dir / ".verified" / f"{spec['path']}.json"
    data_job(spec, data_dir, str(mirror), path, stamp)
    return {"mirror": mirror, "source": source, "spec": spec, "dir": data_dir, "path": path, "stamp": stamp}


def test_verify_job_writes_a_stamp_that_does_not_depend_on_the_fetch(landmine):
    record = json.loads(landmine["stamp"].read_text())
    assert record == {
        "file": str(landmine["path"]),
        "size": landmine["source"].stat().st_size,
        "sha256": sha256(landmine["source"].read_bytes()),  # of the file's bytes, checked by content
        "spec": {"path": landmine["spec"]["path"], "sha256": landmine["spec"]["sha256"]},
    }
    before = landmine["stamp"].read_bytes()
    landmine["path"].unlink()  # fetched again: same bytes, same stamp (Snakemake reruns nothing after)
    data_job(landmine["spec"], landmine["dir"], str(landmine["mirror"]), landmine["path"], landmine["stamp"])
    assert landmine["stamp"].read_bytes() == before


@pytest.mark.parametrize("how", ["random", "truncated"])
def test_verify_job_fetches_a_corrupted_file_again_from_the_mirror(landmine, how, caplog):
    corrupt(landmine["path"], how)
    with pytest.raises(ValueError, match=f"data_path {str(landmine['path'])!r} cannot be read"):
        LandmineSVM(landmine["path"])  # what a run would have hit
    args = landmine["spec"], landmine["dir"], str(landmine["mirror"]), landmine["path"], landmine["stamp"]
    with caplog.at_level(logging.INFO, logger="vhct.pipeline.data"):
        data_job(*args)
    assert landmine["path"].read_bytes() == landmine["source"].read_bytes()
    assert f"{landmine['path']}: the present copy is corrupted (checksum mismatch" in caplog.text
    assert "fetched and verified from mirror" in caplog.text
    assert check_stamp(landmine["stamp"]).file == str(landmine["path"])
    LandmineSVM(landmine["path"])


def test_verify_job_without_a_source_removes_the_corrupted_file_and_names_it(landmine, tmp_path):
    corrupt(landmine["path"], "random")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DownloadError) as err:
        data_job(landmine["spec"], landmine["dir"], str(empty), landmine["path"], landmine["stamp"])
    assert f"could not fetch data file '{landmine['spec']['path']}'" in str(err.value)
    assert f"The present copy at {landmine['path']} failed verification and was removed" in str(err.value)
    assert not landmine["path"].exists()


def hash_calls(monkeypatch) -> list:
    """The files ``vhct.pipeline.data`` hashes from now on (each call of ``compute_digests``)."""
    calls: list = []
    real = verify.compute_digests
    monkeypatch.setattr(verify, "compute_digests", lambda path, spec: calls.append(path) or real(path, spec))
    return calls


def test_stamp_check_reads_nothing_while_the_file_is_unchanged(landmine, monkeypatch):
    calls = hash_calls(monkeypatch)
    for _ in range(2):
        assert check_stamp(landmine["stamp"]).file == str(landmine["path"])
    assert calls == []  # the stat recorded when the verify job hashed it


def test_stamp_check_hashes_a_file_touched_after_its_stamp_once(landmine, monkeypatch):
    calls = hash_calls(monkeypatch)
    later = landmine["stamp"].stat().st_mtime_ns + 10**9
    os.utime(landmine["path"], ns=(later, later))  # same bytes, touched: verified again, accepted
    assert check_stamp(landmine["stamp"]).file == str(landmine["path"])
    assert check_stamp(landmine["stamp"]).file == str(landmine["path"])  # its stat recorded: not again
    assert calls == [landmine["path"]]


def edit_in_place_keeping_size_and_times(path: Path) -> None:
    """Flip one byte of ``path`` in place, then put its modification and access times back."""
    before = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_the_probe_a_file_edited_in_place_with_size_and_mtime_restored_is_hashed_and_refused(landmine):
    """The probe: one byte flipped, size and modification time put back; the stamp check compared
    size and mtime and served the edited file. Now the change time gives it away: hashed, refused."""
    edit_in_place_keeping_size_and_times(landmine["path"])
    with pytest.raises(
        VerificationError, match=f"data file {landmine['path']} is corrupted .checksum mismatch"
    ):
        check_stamp(landmine["stamp"])


def test_a_file_replaced_by_other_bytes_matching_the_spec_is_not_the_verified_one(landmine, tmp_path):
    """The stamp holds the sha256 of the verified bytes: a file that matches another of the spec's
    checksums (here: the spec's md5, the stamp edited to declare it) but not those bytes is refused."""
    other = write_landmine_mat(tmp_path / "other.mat", seed=7)
    record = json.loads(landmine["stamp"].read_text())
    record["spec"] = {"path": record["spec"]["path"], "md5": md5(other.read_bytes())}
    landmine["stamp"].write_text(json.dumps(record))
    other.replace(landmine["path"])
    with pytest.raises(VerificationError, match=f"data file {landmine['path']} is not the file verified"):
        check_stamp(landmine["stamp"])


def test_a_stat_record_of_another_hash_does_not_spare_the_hashing(landmine, monkeypatch):
    """The size+time shortcut holds only with the stamp's own hash: a stat record left by an
    earlier stamp (another file verified) is not trusted."""
    stat_record = landmine["stamp"].with_name(landmine["stamp"].name + vd.STAT_SUFFIX)
    record = json.loads(stat_record.read_text())
    record["sha256"] = "0" * 64
    stat_record.write_text(json.dumps(record))
    calls = hash_calls(monkeypatch)
    check_stamp(landmine["stamp"])
    assert calls == [landmine["path"]]


def test_an_older_stamp_without_the_files_hash_is_refused_saying_what_to_do(landmine):
    record = json.loads(landmine["stamp"].read_text())
    del record["sha256"]
    landmine["stamp"].write_text(json.dumps(record))
    with pytest.raises(VerificationError, match=r"cannot be read .*\(an older format\?\).*delete it"):
        check_stamp(landmine["stamp"])


@pytest.mark.parametrize("how", ["random", "truncated"])
def test_stamp_check_rejects_a_corrupted_file_naming_it(landmine, how):
    corrupt(landmine["path"], how)
    with pytest.raises(VerificationError) as err:
        check_stamp(landmine["stamp"])
    msg = str(err.value)
    assert f"data file {landmine['path']} is corrupted (checksum mismatch" in msg
    assert "--forcerun verify_data" in msg and str(landmine["stamp"]) in msg


def test_stamp_check_names_a_missing_file_and_a_bad_stamp(landmine):
    landmine["path"].unlink()
    with pytest.raises(VerificationError, match=f"data file {landmine['path']} is missing"):
        check_stamp(landmine["stamp"])
    landmine["stamp"].write_text("{")
    with pytest.raises(VerificationError, match=f"verification stamp {landmine['stamp']} cannot be read"):
        check_stamp(landmine["stamp"])


def test_run_job_checks_its_data_files_before_running(landmine, tmp_path):
    from vhct.pipeline.jobs import run_job
    from vhct.pipeline.store import read_batch

    data = {"data_path": str(landmine["path"])}
    spec = run_spec("T-HOO", "landmine", 3, 0, params={"rho": 0.5}, objective_params=data, noise=0.0)
    job = run_job_of(spec)
    batch = tmp_path / "runs" / "seeds0-0.npz"
    run_job(job, batch, [landmine["stamp"]])
    assert [r.run for r in read_batch(batch).record.runs] == [spec]
    batch.unlink()
    corrupt(landmine["path"], "truncated")
    with pytest.raises(VerificationError, match=f"data file {landmine['path']} is corrupted"):
        run_job(job, batch, [landmine["stamp"]])
    assert list(batch.parent.iterdir()) == []  # nothing written, not even a temporary file


def test_loaders_name_a_corrupted_file(tmp_path):
    mat = write_landmine_mat(tmp_path / "L.mat")
    for how in ("random", "truncated"):
        corrupt(mat, how)
        with pytest.raises(ValueError, match=f"data_path {str(mat)!r} cannot be read as a MATLAB file"):
            LandmineSVM(mat)
        write_landmine_mat(mat)
    images = write_mnist_dir(tmp_path / "mnist") / "t10k-images-idx3-ubyte.gz"
    damaged = bytearray(images.read_bytes())
    damaged[30:60] = bytes(b ^ 0xFF for b in damaged[30:60])  # inside the deflate stream
    images.write_bytes(bytes(damaged))
    with pytest.raises(IdxFormatError, match=f"{images}: not a complete, valid gzip file"):
        read_idx_images(images)
