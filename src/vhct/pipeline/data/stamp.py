"""The verification stamp of a data file (:class:`Stamp`): written when the file is verified
(:func:`write_stamp`, rule ``verify_data``) and checked by content before a run reads the file
(:func:`check_stamp`); hashing is skipped only for a file whose stat is the one recorded beside
the stamp with the stamp's sha256 (why the change time: the package's docstring)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vhct.pipeline.data.spec import DataFile, as_data_file
from vhct.pipeline.data.verify import VerificationError, verify_file
from vhct.pipeline.files import atomic_paths

#: the data package's one logger (its modules log as one)
logger = logging.getLogger("vhct.pipeline.data")

#: the record beside a stamp of the file's stat when its hash was last found equal to the stamp's
STAT_SUFFIX = ".stat"
#: the stat fields that must all be unchanged for a file not to be hashed again (see the package)
STAT_FIELDS = ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_dev")


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
    stamp's sha256 (see the package). Otherwise the file is hashed: it must have the stamp's
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
