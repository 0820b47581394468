"""The repository's git record, read in few calls: the commits that changed a path (one ``git log``
per path), the file's content at each of them (one ``git cat-file --batch`` for all), a file at a
commit, and the commits reachable from one (one ``git rev-list``).

What reads the history of shipped files (``vhct.reporting.history``: the design history; the seeds
earlier shipped audits used) reads it through these functions. Errors are :class:`GitError`, one
line naming the repository and what failed.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

#: git's id of a path absent on one side of a change (``--raw``)
ABSENT = "0" * 40
#: field and record separators of the ``git log`` format (bytes no subject line holds)
_FIELD, _RECORD = "\x1f", "\x1e"


class GitError(RuntimeError):
    """A git command that failed, or a repository git cannot read."""


@dataclass(frozen=True)
class Change:
    """One commit that changed a path: its id, commit time, subject line and parents, and the
    path's blob before (its first parent's) and after (``None`` where the path is absent, and for
    a merge, whose file :func:`show` reads)."""

    commit: str
    date: datetime
    subject: str
    parents: tuple[str, ...]
    before: str | None
    after: str | None

    @property
    def is_merge(self) -> bool:
        """Whether the commit is a merge (its change is the one against its first parent)."""
        return len(self.parents) > 1


def git(repo: Path | str, *args: str) -> bytes:
    """``git -C repo args`` run; its standard output (a failure is a :class:`GitError`)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    except FileNotFoundError as exc:
        raise GitError(f"{repo}: git is not installed ({exc})") from None
    except subprocess.CalledProcessError as exc:
        message = " ".join(exc.stderr.decode(errors="replace").split()) or f"exit {exc.returncode}"
        raise GitError(f"{repo}: git {args[0]} failed: {message}") from None
    return done.stdout


def changes(
    repo: Path | str, path: str, rev: str = "HEAD", since: str | None = None, merges: bool = True
) -> list[Change]:
    """The commits reachable from ``rev`` (and not from ``since``) that changed ``path``, newest
    first, as ``git log`` simplifies history (a merge is listed where it differs from every
    parent); ``merges=False`` leaves merges out. One ``git log`` call."""
    fmt = _FIELD.join(("%H", "%cI", "%P", "%s")) + _FIELD
    args = ["log", f"--format={_RECORD}{fmt}", "--raw", "--no-abbrev"]
    args += [] if merges else ["--no-merges"]
    args += [rev if since is None else f"{since}..{rev}", "--", path]
    out = []
    for record in git(repo, *args).decode(errors="replace").split(_RECORD)[1:]:
        sha, date, parents, subject, raw = record.split(_FIELD, 4)
        before = after = None
        for line in raw.strip().splitlines():
            # ":100644 100644 <old> <new> M\t<path>" (one line: the log is limited to this path)
            meta = line.split("\t", 1)[0].split()
            if len(meta) >= 4 and line.startswith(":"):
                before = None if meta[2] == ABSENT else meta[2]
                after = None if meta[3] == ABSENT else meta[3]
        out.append(Change(sha, datetime.fromisoformat(date), subject, tuple(parents.split()), before, after))
    return out


def blobs(repo: Path | str, ids: list[str] | set[str]) -> dict[str, bytes]:
    """The content of each blob (or ``rev:path``) named, in one ``git cat-file --batch`` call;
    one git cannot find is left out."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "cat-file", "--batch"],
            input="".join(f"{i}\n" for i in wanted).encode(),
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        raise GitError(f"{repo}: git cat-file failed ({exc})") from None
    data, at, out = done.stdout, 0, {}
    for name in wanted:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] != b"missing":
            size = int(header[2])
            out[name] = data[at : at + size]
            at += size + 1  # the content and its newline
    return out


def show(repo: Path | str, rev: str, path: str) -> bytes | None:
    """``path`` as it is at ``rev``, or ``None`` where the commit has no such file."""
    return blobs(repo, [f"{rev}:{path}"]).get(f"{rev}:{path}")


def ancestry(repo: Path | str, rev: str = "HEAD") -> dict[str, tuple[str, ...]]:
    """Every commit reachable from ``rev`` with its parents (one ``git rev-list`` call)."""
    lines = git(repo, "rev-list", "--parents", rev).decode().splitlines()
    return {line.split()[0]: tuple(line.split()[1:]) for line in lines if line}


def ancestors(graph: dict[str, tuple[str, ...]], commit: str) -> frozenset[str]:
    """``commit`` and every commit it descends from, in ``graph`` (:func:`ancestry`)."""
    seen, todo = set(), [commit]
    while todo:
        sha = todo.pop()
        if sha not in seen:
            seen.add(sha)
            todo += [p for p in graph.get(sha, ()) if p not in seen]
    return frozenset(seen)


def resolve(repo: Path | str, rev: str) -> str:
    """The full id of the commit ``rev`` names (a :class:`GitError` where none)."""
    return git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
