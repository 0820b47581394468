"""Whether a file is the declared data file: its digests and the check against its spec's checksums
(``sha256`` and ``md5`` of the bytes, ``content_sha256`` of a ``.gz`` file's decompressed bytes; a
``.gz`` file must decompress completely)."""

from __future__ import annotations

import gzip
import hashlib
import zlib
from collections.abc import Mapping
from pathlib import Path

from vhct.pipeline.data.spec import DataFile, as_data_file

#: bytes read at a time when downloading, copying and hashing
CHUNK_SIZE = 1 << 20


class VerificationError(Exception):
    """A file is missing, is not a complete gzip file, or matches none of its checksums."""


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
