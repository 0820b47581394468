"""What a data file is: its spec (:class:`DataFile`, from the config): its path relative to the data
directory, the URLs to try (official first) and its checksums, and the one rule of a path inside the
data directory."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: the folder, relative to the workflow's directory, that the rules write data files into
#: (``data/<path>``) and that objectives' data parameters must name files in
DATA_DIR = "data"
#: URL schemes urllib can fetch
URL_SCHEMES = ("http://", "https://", "ftp://", "file://")
#: keys a spec may have
SPEC_KEYS = frozenset({"path", "urls", "sha256", "content_sha256", "md5", "description"})
#: hex-digest length of each checksum kind
DIGEST_LENGTHS = {"sha256": 64, "content_sha256": 64, "md5": 32}
GZIP_SUFFIX = ".gz"


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
