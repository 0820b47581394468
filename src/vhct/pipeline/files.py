"""Writing outputs safely: atomically (temporary file next to the target, then rename), with the umask's
permissions, and removing what a killed writer left behind; JSON encoding of numpy values; a file's
sha256 and the path a record names it by; a file rewritten only when its content changes.

Every pipeline output goes through ``atomic_paths``, so a failed or interrupted job leaves no
partial file behind. Every record that fixes a file's content (the provenance record, ``ship``'s
checks) hashes it with :func:`sha256` and names it with :func:`display_path`, so two records of
one file agree.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger("vhct.pipeline.files")

#: temporary files are ``.<target name>.<TEMP_TOKEN_BYTES random bytes in hex>.tmp`` next to the target
TEMP_SUFFIX = ".tmp"
TEMP_TOKEN_BYTES = 6
#: permissions asked for a new output before the umask applies (what ``open(path, "w")`` asks)
OUTPUT_MODE = 0o666
#: the digest every record of a file's content uses
DIGEST = "sha256"


def _temp_pattern(final: Path) -> re.Pattern[str]:
    """Names of temporary files of ``final``: ours and the ``mkstemp`` ones of earlier versions."""
    return re.compile(rf"\.{re.escape(final.name)}\.[A-Za-z0-9_]+{re.escape(TEMP_SUFFIX)}")


def remove_stale_temps(final: Path | str) -> list[Path]:
    """Delete the temporary files a killed writer of ``final`` left next to it; return them.

    Safe because Snakemake runs at most one job per output at a time (its directory lock).
    """
    final = Path(final)
    if not final.parent.is_dir():
        return []
    pattern = _temp_pattern(final)
    stale = [p for p in final.parent.iterdir() if pattern.fullmatch(p.name)]
    for path in stale:
        path.unlink(missing_ok=True)
        logger.info("removed %s, left by an interrupted writer of %s", path, final)
    return stale


def _new_temp(final: Path) -> Path:
    """Create an empty, unique temporary file next to ``final`` with the umask's permissions."""
    while True:
        tmp = final.parent / f".{final.name}.{secrets.token_hex(TEMP_TOKEN_BYTES)}{TEMP_SUFFIX}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OUTPUT_MODE))
        except FileExistsError:
            continue
        return tmp


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_paths(*paths: Path | str, durable: bool = False):
    """Yield temporary paths next to ``paths``; rename them onto ``paths`` only if the block succeeds.

    Outputs get the permissions of any new file (``0o666`` minus the umask), not ``mkstemp``'s
    0600, so a group can read results on a shared file system. Temporary files of the same
    targets left by a killed earlier writer are removed first. ``durable`` (downloads) also
    flushes each file and its folder to disk around the rename.
    """
    finals = [Path(p) for p in paths]
    temps = []
    try:
        for final in finals:
            final.parent.mkdir(parents=True, exist_ok=True)
            remove_stale_temps(final)
            temps.append(_new_temp(final))
        yield temps
        for tmp, final in zip(temps, finals, strict=True):
            if durable:
                _fsync_file(tmp)
            os.replace(tmp, final)
            if durable:
                fsync_dir(final.parent)
    finally:
        for tmp in temps:
            tmp.unlink(missing_ok=True)


def json_default(value: Any) -> Any:
    """JSON encoding of numpy scalars/arrays and paths (for sidecars and the audit)."""
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    return repr(value)


def sha256(path: Path | str) -> str:
    """The hex sha256 of the file at ``path``, read in chunks (a file of any size in little memory)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, DIGEST).hexdigest()


def sha256_bytes(data: bytes) -> str:
    """The hex sha256 of ``data`` (a file's bytes already read: a run table, hashed as it is written
    and as it is read back)."""
    return hashlib.new(DIGEST, data).hexdigest()


def write_if_changed(path: Path | str, text: str) -> bool:
    """Write ``text`` to ``path`` (atomically) unless the file already holds exactly it; whether it wrote.

    For the spec files of the rules (``vhct.pipeline.stale``): a file rewritten only when its content
    changes keeps its modification time otherwise, so Snakemake reruns exactly the jobs whose spec
    changed. Written through a temporary file named by this process and renamed, without
    :func:`atomic_paths`' scan of the folder for a killed writer's files (thousands of spec files
    are written when the rules are read; a leftover is a few bytes under ``results/.specs``).
    """
    data = text.encode("utf-8")
    try:
        with open(path, "rb") as handle:
            if handle.read() == data:
                return False
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}{TEMP_SUFFIX}"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
    except FileNotFoundError:  # its folder is new
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
    os.replace(tmp, path)
    return True


def display_path(path: Path | str) -> str:
    """``path`` as a record names it: relative to the working directory when inside it (the same on
    every machine and checkout), else absolute."""
    path = Path(path).absolute()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
