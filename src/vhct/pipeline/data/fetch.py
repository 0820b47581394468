"""Fetch a data file: every URL of its spec, then each mirror directory (argument, then
``$VHCT_DATA_MIRROR``), the first verified copy moved into place atomically; when none verifies,
:class:`DownloadError` names every source tried and why, and nothing is left behind."""

from __future__ import annotations

import logging
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Mapping
from http.client import HTTPException
from pathlib import Path

from vhct.pipeline.data.spec import DataFile, as_data_file
from vhct.pipeline.data.verify import CHUNK_SIZE, VerificationError, verify_file
from vhct.pipeline.files import atomic_paths, remove_stale_temps

#: the data package's one logger (its modules log as one)
logger = logging.getLogger("vhct.pipeline.data")

#: environment variable naming a local mirror directory (files at ``<mirror>/<path>``)
MIRROR_ENV = "VHCT_DATA_MIRROR"
#: config key naming a local mirror directory (quoted in error messages)
MIRROR_CONFIG_KEY = "data.mirror"
#: seconds a URL may stall (connect or read) before it is abandoned
DEFAULT_TIMEOUT = 60.0


class DownloadError(Exception):
    """No source yielded a verified copy of a data file."""


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
