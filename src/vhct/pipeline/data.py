"""Download and verify the data files of the real-data experiments.

Each file is described by a :class:`DataFile` spec (it comes from the config): its path
relative to the data directory, the URLs to try (official first) and its checksums.
:func:`fetch_file` tries every URL, then a local mirror directory (argument, then the
``VHCT_DATA_MIRROR`` environment variable), verifies what it got and moves it into place
atomically. When no source yields a verified file it raises :class:`DownloadError` naming
the file, every source tried with the reason it failed, and how to use a mirror. A failed
fetch leaves nothing behind.

Checksums: ``sha256`` and ``md5`` are of the file bytes; ``content_sha256`` (``.gz`` files
only) is of the decompressed bytes, because mirrors recompress gzip files while keeping
their content. A file passes when at least one declared checksum matches; a ``.gz`` file
must also decompress completely (a truncated or corrupted gzip never passes).

A file is verified before it is used, not only when it is fetched: :func:`write_stamp`
writes the verification stamp of a verified file (rule ``verify_data``: its path, size, the
sha256 of its bytes and the checksums of its spec) and :func:`check_stamp` checks the file
against it, by content, before a run reads it. Hashing is skipped only when the file's stat
(size, modification and change times, inode, device) equals the one recorded beside the stamp
(``<stamp>.stat``) together with a sha256 equal to the stamp's; any other file is hashed again
and must have the stamp's sha256 and match its spec. Why the change time: an edit in place
with its size kept and its modification time put back (``touch -r``, ``os.utime``) sets the
inode's change time to the present, which no user can set back (only a change of the system
clock or raw disk access can), and a file replaced by another gets another inode; a
modification time alone is not evidence. Downloaded files are created like any normal file
(their mode follows the umask), never with ``mkstemp``'s private mode 0600.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import urllib.error
import urllib.request
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from http.client import HTTPException
from pathlib import Path

from vhct.pipeline.files import atomic_paths, remove_stale_temps

logger = logging.getLogger(__name__)

#: the folder, relative to the workflow's directory, that the rules write data files into
#: (``data/<path>``) and that objectives' data parameters must name files in
DATA_DIR = "data"
#: environment variable naming a local mirror directory (files at ``<mirror>/<path>``)
MIRROR_ENV = "VHCT_DATA_MIRROR"
#: config key naming a local mirror directory (quoted in error messages)
MIRROR_CONFIG_KEY = "data.mirror"
#: seconds a URL may stall (connect or read) before it is abandoned
DEFAULT_TIMEOUT = 60.0
#: bytes read at a time when downloading, copying and hashing
CHUNK_SIZE = 1 << 20
#: URL schemes urllib can fetch
URL_SCHEMES = ("http://", "https://", "ftp://", "file://")
#: keys a spec may have
SPEC_KEYS = frozenset({"path", "urls", "sha256", "content_sha256", "md5", "description"})
#: hex-digest length of each checksum kind
DIGEST_LENGTHS = {"sha256": 64, "content_sha256": 64, "md5": 32}
GZIP_SUFFIX = ".gz"
#: the record beside a stamp of the file's stat when its hash was last found equal to the stamp's
STAT_SUFFIX = ".stat"
#: the stat fields that must all be unchanged for a file not to be hashed again (see the module)
STAT_FIELDS = ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")


def inside_data_dir(path: object) -> str:
    """``path`` if it names a file inside the data directory (relative, ``/``-separated, no empty,
    ``.`` or ``..`` part, no backslash), else a ValueError saying so. The pre-check of a config
    (``vhct.pipeline.config.checks``) and every :class:`DataFile` apply this one rule."""
    parts = path.split("/") if isinstance(path, str) else None
    if not path or parts is None or "\\" in path or any(part in ("", ".", "..") for part in parts):
        raise ValueError(
            f"a data file's 'path' must stay inside the data directory (relative, without '.', '..' or "
            f"empty parts), got {path!r}"
        )
    return path


class VerificationError(Exception):
    """A file is missing, is not a complete gzip file, or matches none of its checksums."""


class DownloadError(Exception):
    """No source yielded a verified copy of a data file."""


@dataclass(frozen=True)
class DataFile:
    """Where a data file goes, where it comes from, and how to recognise it."""

    path: str
    urls: tuple[str, ...] = ()
    sha256: str | None = None
    content_sha256: str | None = None
    md5: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        inside_data_dir(self.path)
        if isinstance(self.urls, str) or not all(isinstance(u, str) for u in self.urls):
            raise ValueError(f"data file {self.path!r}: 'urls' must be a list of strings, got {self.urls!r}")
        object.__setattr__(self, "urls", tuple(self.urls))
        for url in self.urls:
            if not url.lower().startswith(URL_SCHEMES):
                raise ValueError(f"data file {self.path!r}: 'urls' entry {url!r} is not one of {URL_SCHEMES}")
        for key, length in DIGEST_LENGTHS.items():
            value = getattr(self, key)
            if value is None:
                continue
            if not isinstance(value, str) or not re.fullmatch(f"[0-9a-fA-F]{{{length}}}", value):
                msg = f"data file {self.path!r}: '{key}' must be {length} hex digits, got {value!r}"
                raise ValueError(msg)
            object.__setattr__(self, key, value.lower())
        if self.content_sha256 is not None and not self.is_gzip:
            raise ValueError(f"data file {self.path!r}: 'content_sha256' needs a {GZIP_SUFFIX} path")
        if not self.checksums:
            raise ValueError(f"data file {self.path!r}: give at least one of {sorted(DIGEST_LENGTHS)}")

    @classmethod
    def from_dict(cls, spec: Mapping[str, object]) -> DataFile:
        """Build a spec from a config mapping; unknown keys are errors."""
        if not isinstance(spec, Mapping):
            raise ValueError(f"data file spec must be a mapping, got {spec!r}")
        unknown = sorted(set(spec) - SPEC_KEYS)
        if unknown:
            raise ValueError(f"data file spec has unknown key(s) {unknown}; allowed: {sorted(SPEC_KEYS)}")
        if "path" not in spec:
            raise ValueError(f"data file spec lacks the key 'path': {dict(spec)!r}")
        urls = spec.get("urls") or ()
        if isinstance(urls, str) or not isinstance(urls, list | tuple):
            raise ValueError(f"data file {spec['path']!r}: 'urls' must be a list of strings, got {urls!r}")
        return cls(**{**spec, "urls": tuple(urls)})  # type: ignore[arg-type]

    @property
    def is_gzip(self) -> bool:
        """True for a ``.gz`` path: the file must decompress completely."""
        return self.path.endswith(GZIP_SUFFIX)

    @property
    def checksums(self) -> dict[str, str]:
        """The declared checksums, by kind."""
        return {k: v for k in DIGEST_LENGTHS if (v := getattr(self, k)) is not None}


def as_data_file(spec: DataFile | Mapping[str, object]) -> DataFile:
    """Accept a spec or its config mapping."""
    return spec if isinstance(spec, DataFile) else DataFile.from_dict(spec)


def compute_digests(path: Path, spec: DataFile) -> dict[str, str]:
    """Hex digests of ``path``: the sha256 of its bytes (always: the stamp records it) and the
    other checksum kinds ``spec`` declares.

    A ``.gz`` file is always decompressed to the end, so truncation and CRC errors surface
    here as :class:`VerificationError` even when only byte checksums are declared.
    """
    raw = {"sha256": hashlib.sha256(), "md5": hashlib.md5(usedforsecurity=False)}
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK_SIZE):
            for h in raw.values():
                h.update(chunk)
    digests = {k: raw[k].hexdigest() for k in ("sha256", "md5") if k == "sha256" or k in spec.checksums}
    if spec.is_gzip:
        content = hashlib.sha256()
        try:
            with gzip.open(path, "rb") as fh:
                while chunk := fh.read(CHUNK_SIZE):
                    content.update(chunk)
        except (EOFError, OSError, zlib.error) as exc:
            raise VerificationError(f"{path.name} is not a complete gzip file ({exc})") from exc
        digests["content_sha256"] = content.hexdigest()
    return {k: v for k, v in digests.items() if k == "sha256" or k in spec.checksums}


def verify_file(path: Path | str, spec: DataFile | Mapping[str, object]) -> dict[str, str]:
    """Raise :class:`VerificationError` unless ``path`` matches at least one checksum of ``spec``;
    return its digests (:func:`compute_digests`)."""
    spec, path = as_data_file(spec), Path(path)
    if not path.is_file():
        raise VerificationError(f"{path} does not exist")
    actual = compute_digests(path, spec)
    if any(actual[k] == expected for k, expected in spec.checksums.items()):
        return actual
    detail = "; ".join(f"{k} expected {v}, got {actual[k]}" for k, v in spec.checksums.items())
    raise VerificationError(f"checksum mismatch ({detail})")


def mirror_dirs(mirror: Path | str | None = None) -> list[tuple[Path, str]]:
    """Mirror directories to try, in order: the argument (config), then ``$VHCT_DATA_MIRROR``."""
    found: list[tuple[Path, str]] = []
    env = os.environ.get(MIRROR_ENV)
    for value, origin in ((mirror, "config"), (env, MIRROR_ENV)):
        if value is not None and str(value) != "":
            folder = Path(value).expanduser()
            if all(folder != known for known, _ in found):
                found.append((folder, origin))
    return found


def _copy_url(url: str, out, timeout: float) -> None:
    """Stream ``url`` into the open file ``out``; a short transfer is an error."""
    with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (schemes checked in DataFile)
        expected = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
        total = 0
        while chunk := resp.read(CHUNK_SIZE):
            out.write(chunk)
            total += len(chunk)
    if expected is not None and expected.isdigit() and total != int(expected):
        raise VerificationError(f"truncated transfer: got {total} of {expected} bytes")


def _reason(exc: BaseException, timeout: float) -> str:
    """One line saying why a source failed."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        if isinstance(exc.reason, TimeoutError):
            return f"timeout after {timeout:g} s"
        return f"unreachable ({exc.reason})"
    if isinstance(exc, TimeoutError):
        return f"timeout after {timeout:g} s"
    if isinstance(exc, VerificationError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _try_source(kind: str, where: str, spec: DataFile, dest: Path, timeout: float) -> None:
    """Fetch one source into a temp file next to ``dest``, verify it, move it to ``dest``.

    Raises on any failure; the temp file is removed in every case except success
    (``vhct.pipeline.files.atomic_paths``).
    """
    with atomic_paths(dest, durable=True) as (tmp,):
        with open(tmp, "wb") as out:
            if kind == "url":
                _copy_url(where, out, timeout)
            else:
                with open(where, "rb") as src:
                    shutil.copyfileobj(src, out, CHUNK_SIZE)
        verify_file(tmp, spec)


def mirror_problem(folder: Path, path: Path) -> str | None:
    """Why the copy at ``path`` in the mirror ``folder`` cannot be used (None: a readable file).
    A mirror that is a file or no folder at all is named as such, and an unreadable mirror folder
    is one more failed source in the error, not a traceback."""
    try:
        if not folder.is_dir():
            return f"{folder} is not a directory" if folder.exists() else f"no such directory {folder}"
        if not path.is_file():
            return f"missing in mirror ({path})"
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"cannot read {path} ({exc.strerror or exc})"
    return None


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and missing parents; return the ones created, deepest first."""
    created = []
    probe = folder
    while not probe.exists():
        created.append(probe)
        probe = probe.parent
    folder.mkdir(parents=True, exist_ok=True)
    return created


def _mirror_help(spec: DataFile) -> str:
    return (
        f"To use a local copy, place the file at <mirror>/{spec.path} and set "
        f"{MIRROR_ENV}=/path/to/mirror or the config key '{MIRROR_CONFIG_KEY}'."
    )


def fetch_file(
    spec: DataFile | Mapping[str, object],
    dest_dir: Path | str,
    mirror: Path | str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Path:
    """Make ``dest_dir/spec.path`` a verified copy of the file and return its path.

    A present file that verifies is kept. Otherwise each URL is tried in order, then each
    mirror directory (``mirror``, then ``$VHCT_DATA_MIRROR``); the first verified copy is
    moved into place atomically. If none verifies, :class:`DownloadError` is raised and
    nothing is left behind (a present file that failed verification is removed too).
    """
    spec = as_data_file(spec)
    if not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"timeout must be a number > 0, got {timeout!r}")
    dest = Path(dest_dir) / spec.path
    if dest.exists():
        try:
            verify_file(dest, spec)
        except VerificationError as exc:
            logger.warning("%s: the present copy is corrupted (%s); fetching it again", dest, exc)
        else:
            logger.info("%s: present and verified, kept", spec.path)
            return dest

    sources: list[tuple[str, str, str, Path | None]] = [("url", url, url, None) for url in spec.urls]
    for folder, origin in mirror_dirs(mirror):
        sources.append(("mirror", str(folder / spec.path), f"mirror {folder} ({origin})", folder))
    created = _make_parents(dest.parent)
    remove_stale_temps(dest)
    failures: list[str] = []
    for kind, where, label, folder in sources:
        logger.info("%s: trying %s", spec.path, label)
        problem = mirror_problem(folder, Path(where)) if folder is not None else None
        if problem is not None:
            failures.append(f"{label}: {problem}")
            logger.info("%s: %s", spec.path, failures[-1])
            continue
        try:
            _try_source(kind, where, spec, dest, timeout)
        except (OSError, HTTPException, VerificationError, ValueError) as exc:
            failures.append(f"{label}: {_reason(exc, timeout)}")
            logger.info("%s: %s", spec.path, failures[-1])
            continue
        logger.info("%s: fetched and verified from %s", spec.path, label)
        return dest

    removed = ""
    if dest.is_file():
        dest.unlink()
        removed = f"\nThe present copy at {dest} failed verification and was removed."
    for folder in created:
        if folder.exists() and not any(folder.iterdir()):
            folder.rmdir()
    tried = "\n".join(f"  - {line}" for line in failures) or "  (no URL given and no mirror configured)"
    raise DownloadError(
        f"could not fetch data file '{spec.path}' into {Path(dest_dir)}; sources tried:\n{tried}{removed}\n"
        + _mirror_help(spec)
    )


@dataclass(frozen=True)
class Stamp:
    """The verification stamp of a data file: its path, size, the sha256 of its bytes and the spec
    (path and declared checksums) it was verified against. Content only, nothing that changes when
    the same bytes are fetched again: a file restored from a mirror gives a byte-identical stamp,
    which Snakemake (comparing checksums of small inputs) does not count as a change in a later
    invocation. :func:`write_stamp` is its one writer, :meth:`read` its one reader."""

    file: str
    size: int
    sha256: str
    spec: DataFile

    def to_json(self) -> str:
        spec = {"path": self.spec.path, **self.spec.checksums}
        return json.dumps(
            {"file": self.file, "size": self.size, "sha256": self.sha256, "spec": spec}, indent=2
        )

    @classmethod
    def read(cls, stamp_path: Path) -> Stamp:
        """The stamp at ``stamp_path``; unreadable or of another format: :class:`VerificationError`
        saying how to recover."""
        try:
            record = json.loads(stamp_path.read_text(encoding="utf-8"))
            if not isinstance(record, dict) or sorted(record) != ["file", "sha256", "size", "spec"]:
                raise ValueError("its keys are not file, sha256, size, spec (an older format?)")
            sha, size = record["sha256"], record["size"]
            if not (isinstance(sha, str) and re.fullmatch("[0-9a-f]{64}", sha)) or not isinstance(size, int):
                raise ValueError(f"bad sha256 {sha!r} or size {size!r}")
            return cls(
                file=str(record["file"]), size=size, sha256=sha, spec=DataFile.from_dict(record["spec"])
            )
        except (OSError, ValueError, TypeError) as exc:
            raise VerificationError(
                f"verification stamp {stamp_path} cannot be read ({exc}); delete it: the next snakemake "
                "run verifies its data file again"
            ) from exc


def _stat_key(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {field: getattr(stat, field) for field in STAT_FIELDS}


def _stat_path(stamp_path: Path) -> Path:
    return stamp_path.with_name(stamp_path.name + STAT_SUFFIX)


def _record_stat(stamp_path: Path, key: dict[str, int], sha256: str) -> None:
    """Record beside the stamp that the file with this stat had this sha256 (atomically)."""
    with atomic_paths(_stat_path(stamp_path)) as (tmp,):
        tmp.write_text(json.dumps({"sha256": sha256, "stat": key}) + "\n", encoding="utf-8")


def _hashed(path: Path, spec: DataFile) -> tuple[dict[str, str], dict[str, int] | None]:
    """The verified digests of ``path`` and its stat key, None when the file changed while hashed."""
    before = _stat_key(path)
    digests = verify_file(path, spec)
    return digests, before if _stat_key(path) == before else None


def write_stamp(stamp_path: Path | str, path: Path | str, spec: DataFile | Mapping[str, object]) -> Stamp:
    """Verify the data file at ``path`` against ``spec`` and write its stamp (and the stat of the
    file it hashed, beside it) atomically; return the stamp."""
    spec, path, stamp_path = as_data_file(spec), Path(path), Path(stamp_path)
    digests, key = _hashed(path, spec)
    stamp = Stamp(file=str(path), size=path.stat().st_size, sha256=digests["sha256"], spec=spec)
    stamp_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_paths(stamp_path) as (tmp,):
        tmp.write_text(stamp.to_json() + "\n", encoding="utf-8")
    if key is not None:
        _record_stat(stamp_path, key, stamp.sha256)
    return stamp


def check_stamp(stamp_path: Path | str) -> Stamp:
    """Check a data file against its verification stamp before it is used; return the stamp.

    Nothing is read when the file's stat equals the one recorded beside the stamp with the
    stamp's sha256 (see the module). Otherwise the file is hashed: it must have the stamp's
    sha256 and match its spec, else :class:`VerificationError` names the file and how to recover;
    a file found equal has its stat recorded, so the next check reads nothing.
    """
    stamp_path = Path(stamp_path)
    stamp = Stamp.read(stamp_path)
    path = Path(stamp.file)
    try:
        key = _stat_key(path)
    except FileNotFoundError as exc:
        raise VerificationError(f"data file {path} is missing; rerun snakemake: it fetches it again") from exc
    try:
        recorded = json.loads(_stat_path(stamp_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = None
    if recorded == {"sha256": stamp.sha256, "stat": key}:
        return stamp
    logger.info("%s: not the file last found equal to its stamp %s; hashing it again", path, stamp_path)
    recover = (
        f"delete it and rerun snakemake (it fetches the file again), or rerun with "
        f"`snakemake --forcerun verify_data` (stamp: {stamp_path})"
    )
    try:
        digests, key = _hashed(path, stamp.spec)
    except VerificationError as exc:
        raise VerificationError(f"data file {path} is corrupted ({exc}); {recover}") from exc
    if digests["sha256"] != stamp.sha256:
        raise VerificationError(
            f"data file {path} is not the file verified (sha256 {digests['sha256']}, its stamp "
            f"{stamp.sha256}); {recover}"
        )
    if key is not None:
        _record_stat(stamp_path, key, stamp.sha256)
    return stamp
