"""Ship a finished pipeline run's findings into the repository: ``docs/findings.md``, its data and figures.

    python -m vhct.reporting.ship                # after `make paper-local` (this is `make findings`)
    python -m vhct.reporting.ship --results results/mine --figures figures/mine   # another config's run
    python -m vhct.reporting.ship --reduced      # a reduced-scale run, published as one
    python -m vhct.reporting.ship render         # re-render docs/findings.md and the README block
    python -m vhct.reporting.ship recover        # finish an interrupted ship, remove its staging

``ship`` copies what a finished run produced into ``docs/``: the audit's JSON, the final and
timing aggregates of every audited experiment and the run's provenance record into
``docs/findings/``, the PNGs of the figures the document links into ``docs/figures/``; renders
``docs/findings.md`` from those files (``vhct.reporting.findings.render``) and rewrites the
README's findings block (between ``README_BEGIN`` and ``README_END``).

What it refuses, changing nothing:

- **Files of another run.** The provenance recorder (``vhct.pipeline.provenance``) writes, when
  the command ends, the sha256 of every output it finds (the results folder's ``audit.json``, the
  aggregates, the figures' PNGs); each file shipped must have exactly that content. The audit must carry the
  recorded run id and config files (and checksums); each final aggregate must hold the settings,
  horizons and seeds of the audited config. Content, not modification times: an edited file with
  its time put back (``touch -r``) is refused. (The former checks of modification times added
  nothing once the recorded hashes and the audit's run id are required, and are gone.)
- **Mixed package versions.** The provenance record's ``versions`` against the ``versions`` of
  each run sidecar of the audited experiments (``<results>/runs/<experiment>/<setting>/seed<n>.json``,
  read through the pipeline's one reader, ``vhct.pipeline.tables.read_sidecar``: a sidecar that is
  not a valid run record is refused, naming it) and the audit's ``context.versions`` when it
  records them. The run itself refused runs of other versions than the ones installed when it ran
  (``vhct.pipeline.tables``); this check ties the shipped files to one install.
- **A reduced-scale run, unless told** (``--reduced``). The rule is read from the audit JSON
  alone: the run is at the paper's scale when every audited experiment ran at least the largest
  ``min_seeds`` of the audited claims (the fewest seeds the audit decides a claim on; 20), so
  its verdicts can be decided at all. Horizons are not part of the rule (the paper-scale local
  run stops MNIST at 100 rounds, in test-split mode); what ran short of the paper's horizons is
  the document's "Not at the paper's full scale" section. A reduced run's README block starts
  "At reduced scale (N seeds ...)", never "At the paper's scale"; the rule is applied to the
  shipped audit, so :func:`readme_block` gives the same text whenever it is rendered again.

Crash safety: a journal. Everything new is first staged in ``docs/.findings-staging-<id>/``
(``findings/``, ``figures/``, ``findings.md`` and the whole new README text); then the journal
``docs/.findings-journal.json``, naming the stage, the entries to swap and whether the README is
part of the swap, is written atomically (the commit point); then each entry of ``docs/`` is
renamed into the stage as ``old-<name>`` and the staged one renamed into place, the README
replaced by one rename, the journal removed and the stage deleted. Every step is idempotent.
Every ``ship`` (and ``render``, ``recover``) starts by rolling an existing journal forward to
its end and deleting stages that no journal names, so after a SIGKILL at any point the next
command leaves ``docs/`` and the README entirely the new findings (journal written) or entirely
the old ones (killed before it). A symlink swap would not do: ``docs/findings.md``, two folders
and the README are four names that no single rename replaces. Two ships at once are serialized
by a lock on the docs folder.

The journal names nothing outside the docs folder it lies in (:class:`Journal`): its stage is a
staging folder of that folder (a name, not a path), its entries are among ``findings/``,
``figures/`` and ``findings.md``, and of the README it says only whether the swap replaces one:
which README is the command's to say (``--readme``, or the default below), as when it shipped, so
a journal committed by mistake and recovered in another clone replaces that clone's README, never
the first one's. A journal naming anything else (an absolute path, ``..``, an unknown entry, a
stage or entry that is a symbolic link or missing), or in an older format, is refused with one line
before anything is touched; delete it. The journal and the staging folders are git-ignored.

``--docs DIR`` touches nothing outside DIR: the README edited is ``--readme PATH``, and by
default the repository's ``README.md`` only when ``--docs`` is the default ``docs``. A ``--docs``
that exists and is not a folder is refused with one line.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from vhct.pipeline.files import fsync_dir
from vhct.reporting.findings import (
    AGGREGATES,
    AUDIT_JSON,
    DATA_DIR,
    DOCUMENT,
    FIGURES_DIR,
    PROVENANCE_JSON,
    README_BEGIN,
    README_END,
    FindingsError,
    read_audit,
    read_json,
    render,
)
from vhct.reporting.render import render_readme
from vhct.reporting.ship_checks import check_hashes, check_one_run, check_scale, check_versions

#: the folders of the run `make findings` ships by default: `make paper-local`'s (config/paper-local.yaml's
#: folders in results/ and figures/, see vhct.pipeline.config.Config.folder)
DEFAULT_RESULTS = Path("results") / "paper-local"
DEFAULT_FIGURES = Path("figures") / "paper-local"
#: a figure link in the rendered document
FIGURE_LINK = re.compile(rf"\]\(({FIGURES_DIR}/[^)#\s]+\.png)\)")
#: the journal of a swap under way, and the prefix of the staging folders (both inside docs/)
JOURNAL = ".findings-journal.json"
STAGE_PREFIX = ".findings-staging-"
#: a staging folder's name: the prefix and what ``tempfile.mkdtemp`` appends
STAGE_NAME = re.compile(rf"{re.escape(STAGE_PREFIX)}[A-Za-z0-9_]+")
#: the entries of the docs folder a swap replaces (a journal may name no others)
SWAPPED = (DATA_DIR, FIGURES_DIR, DOCUMENT)
#: the new README text inside a stage
NEW_README = "README.new"
#: test hook: exit (as a SIGKILL would leave things) right after this many steps that change files
EXIT_AFTER_ENV = "VHCT_SHIP_EXIT_AFTER"
#: the default docs folder and the README edited with it
DEFAULT_DOCS = Path("docs")
DEFAULT_README = Path("README.md")

_steps = 0


def _step() -> None:
    """Count one change on disk; the test hook ends the process abruptly after the N-th."""
    global _steps
    _steps += 1
    limit = os.environ.get(EXIT_AFTER_ENV)
    if limit is not None and _steps >= int(limit):
        os._exit(99)


# ---------------------------------------------------------------- the README block
def readme_block(docs: Path | str) -> str:
    """The README's findings block (``readme.j2``): the shipped audit's headline, its scale and a link
    to the document, between the markers."""
    audit = read_audit(Path(docs) / DATA_DIR / AUDIT_JSON)
    text = render_readme(audit, DOCUMENT)
    return "\n".join([README_BEGIN, text, README_END])


def with_readme_block(readme: str, block: str) -> str:
    """``readme`` with the text between the findings markers replaced by ``block``."""
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise FindingsError(f"the README lacks the findings markers {README_BEGIN!r} ... {README_END!r}")
    return readme[:start] + block + readme[end + len(README_END) :]


# ---------------------------------------------------------------- the journal
@contextmanager
def _locked(docs: Path) -> Iterator[None]:
    """Hold an exclusive lock on the docs folder (one ship at a time)."""
    fd = os.open(docs, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Journal:
    """The commit point of a swap in a docs folder: its stage (a staging folder's name), the entries
    of the folder it replaces (among :data:`SWAPPED`) and whether it replaces the README too (which
    README is the command's to say). :func:`_commit` is its one writer, :meth:`read` its one reader."""

    stage: str
    names: tuple[str, ...]
    readme: bool

    def write(self, path: Path) -> None:
        """Write the journal to ``path`` and flush it to disk (the caller renames it into place)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(json.dumps({**asdict(self), "names": list(self.names)}, indent=2) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    @classmethod
    def read(cls, docs: Path) -> Journal:
        """The journal of ``docs``, checked: anything naming what is not this folder's stage and
        entries is refused (:class:`FindingsError`, one line) before anything is touched."""
        path = docs / JOURNAL

        def refuse(why: str) -> FindingsError:
            return FindingsError(
                f"{path}: {why}; not a journal a ship into {docs} wrote: nothing was changed, delete it"
            )

        if path.is_symlink():
            raise refuse("it is a symbolic link")
        data = read_json(path)
        fields = {"stage", "names", "readme"}
        if not isinstance(data, dict) or set(data) != fields:
            raise refuse(f"its keys must be {sorted(fields)}")
        stage, names, readme = data["stage"], data["names"], data["readme"]
        if not (isinstance(stage, str) and STAGE_NAME.fullmatch(stage)):
            raise refuse(f"its stage {stage!r} is not the name of a staging folder {STAGE_PREFIX}*")
        folder = docs / stage
        if folder.is_symlink() or not folder.is_dir():
            raise refuse(f"its stage {stage} is not a folder in {docs}")
        if not (
            isinstance(names, list)
            and names
            and all(isinstance(n, str) and n in SWAPPED for n in names)
            and len(set(names)) == len(names)
        ):
            raise refuse(f"it names {names!r}, not entries among {', '.join(SWAPPED)}")
        if not isinstance(readme, bool):
            raise refuse(f"its 'readme' is {readme!r}, not true or false")
        for name in [*names, NEW_README]:
            if (folder / name).is_symlink():
                raise refuse(f"{stage}/{name} is a symbolic link")
        return cls(stage=stage, names=tuple(names), readme=readme)


def _roll_forward(docs: Path, journal: Journal, readme: Path | None) -> None:
    """Finish the swap the journal names; every step can be repeated after a kill. The README it
    replaces is ``readme``, the command's (a journal naming one with no README given is refused)."""
    stage = docs / journal.stage
    staged = stage / NEW_README
    if journal.readme and readme is None and staged.exists():
        raise FindingsError(
            f"{docs / JOURNAL}: the interrupted ship replaces a README too: give it (--readme); nothing "
            "was changed"
        )
    for name in journal.names:
        new, current = stage / name, docs / name
        if not new.exists():
            continue  # already in place
        if current.exists() or current.is_symlink():
            current.rename(stage / f"old-{name}")
            _step()
        new.rename(current)
        _step()
    if journal.readme and readme is not None and staged.exists():
        try:
            os.replace(staged, readme)
        except OSError:  # another file system: a copy next to the README, renamed into place
            tmp = readme.with_name(f".{readme.name}.findings.tmp")
            shutil.copyfile(staged, tmp)
            os.replace(tmp, readme)
            staged.unlink()
        _step()
    fsync_dir(docs)
    (docs / JOURNAL).unlink()
    _step()
    shutil.rmtree(stage, ignore_errors=True)


def _recover(docs: Path, readme: Path | None) -> bool:
    """Roll an interrupted swap forward and delete leftover stages; True if a swap was finished.
    A leftover that is a symbolic link is left alone (nothing is followed)."""
    finished = False
    if (docs / JOURNAL).exists() or (docs / JOURNAL).is_symlink():
        _roll_forward(docs, Journal.read(docs), readme)
        finished = True
    for leftover in docs.glob(f"{STAGE_PREFIX}*"):
        if not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
    return finished


def docs_folder(docs: Path | str) -> Path:
    """``docs`` as a path, refused in one line when it exists and is not a folder."""
    docs = Path(docs)
    if docs.exists() and not docs.is_dir():
        raise FindingsError(
            f"the docs folder {docs} is a file, not a folder (--docs names the folder to ship into)"
        )
    return docs


def recover(docs: Path | str, readme: Path | str | None = None) -> bool:
    """Finish a ship a kill interrupted (or drop its unfinished staging); True if one was finished.
    ``readme``: the README the ship was given (the journal only says whether it replaces one)."""
    docs = docs_folder(docs)
    if not docs.is_dir():
        return False
    with _locked(docs):
        return _recover(docs, Path(readme) if readme is not None else None)


def _commit(docs: Path, stage: Path, names: Sequence[str], readme: Path | None) -> None:
    """Write the journal (the commit point), then swap the staged entries and README in."""
    journal = Journal(stage=stage.name, names=tuple(names), readme=readme is not None)
    draft = stage / "journal.json"
    journal.write(draft)
    os.replace(draft, docs / JOURNAL)
    fsync_dir(docs)
    _step()
    _roll_forward(docs, journal, readme)


def _stage_readme(stage: Path, readme: Path | None) -> None:
    if readme is not None:
        text = with_readme_block(readme.read_text(encoding="utf-8"), readme_block(stage))
        (stage / NEW_README).write_text(text, encoding="utf-8")
        _step()


# ---------------------------------------------------------------- ship and render
def ship(
    results: Path | str,
    figures: Path | str,
    docs: Path | str,
    readme: Path | str | None = None,
    reduced: bool = False,
) -> list[Path]:
    """Ship one finished run into ``docs``: its audit JSON, aggregates and provenance record,
    the PNGs of the figures its config declares that the document links, the document, and
    (given ``readme``) the README's findings block; return the shipped files.

    Nothing in ``docs`` or the README changes unless everything checks (see the module's
    docstring); the swap is journaled, so a kill leaves what the next ``ship`` completes.
    """
    results, figures, docs = Path(results), Path(figures), docs_folder(docs)
    readme = Path(readme) if readme is not None else None
    audit_path = results / AUDIT_JSON
    prov_path = results / PROVENANCE_JSON
    audit = read_audit(audit_path)
    prov = read_json(prov_path)
    data = {audit_path: Path(DATA_DIR) / AUDIT_JSON, prov_path: Path(DATA_DIR) / PROVENANCE_JSON}
    finals = {}
    for name in audit.context.experiments:
        for file in AGGREGATES:
            source = results / "aggregates" / name / file
            data[source] = Path(DATA_DIR) / "aggregates" / name / file
        finals[name] = results / "aggregates" / name / AGGREGATES[0]
    pngs = {figures / f"{name}.png": Path(FIGURES_DIR) / f"{name}.png" for name in prov.get("figures", [])}
    missing = [str(p) for p in (*data, *pngs) if not p.is_file()]
    if missing:
        raise FindingsError(
            f"missing input(s) of the findings (run `make paper-local` first): {', '.join(missing)}"
        )
    check_one_run(audit, prov, audit_path, finals)
    outputs = {p: ("results", p.relative_to(results).as_posix()) for p in data if p != prov_path}
    outputs.update({p: ("figures", p.name) for p in pngs})
    check_hashes(prov, outputs)
    check_versions(prov, audit, audit_path, results)
    check_scale(audit, audit_path, reduced)
    if readme is not None:
        with_readme_block(readme.read_text(encoding="utf-8"), "")  # its markers, before anything is staged
    try:
        docs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FindingsError(f"cannot create the docs folder {docs} ({exc.strerror or exc})") from None
    with _locked(docs):
        _recover(docs, readme)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=docs))
        try:
            for source, target in {**data, **pngs}.items():
                (stage / target).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, stage / target)
                _step()
            (stage / FIGURES_DIR).mkdir(exist_ok=True)
            text = render(stage)
            linked = set(FIGURE_LINK.findall(text))
            unshipped = sorted(link for link in linked if not (stage / link).is_file())
            if unshipped:
                raise FindingsError(
                    f"the document links figure(s) the run did not make: {', '.join(unshipped)}"
                )
            for target in pngs.values():
                if str(target) not in linked:
                    (stage / target).unlink()
            (stage / DOCUMENT).write_text(text, encoding="utf-8")
            _step()
            _stage_readme(stage, readme)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        _commit(docs, stage, [DATA_DIR, FIGURES_DIR, DOCUMENT], readme)
    shipped = [docs / t for t in data.values()] + [docs / t for t in pngs.values() if str(t) in linked]
    return [*shipped, docs / DOCUMENT]


def rewrite(docs: Path | str, readme: Path | str | None = None) -> Path:
    """Render ``docs/findings.md`` again from the shipped files and, given ``readme``, its findings
    block; swapped in through the same journal as :func:`ship`."""
    docs = docs_folder(docs)
    readme = Path(readme) if readme is not None else None
    text = render(docs)
    if readme is not None:
        with_readme_block(readme.read_text(encoding="utf-8"), "")
    with _locked(docs):
        _recover(docs, readme)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=docs))
        try:
            (stage / DOCUMENT).write_text(text, encoding="utf-8")
            if readme is not None:
                updated = with_readme_block(readme.read_text(encoding="utf-8"), readme_block(docs))
                (stage / NEW_README).write_text(updated, encoding="utf-8")
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        _commit(docs, stage, [DOCUMENT], readme)
    return docs / DOCUMENT


def default_readme(docs: Path, readme: Path | None) -> Path | None:
    """The README to edit: the one named, else the repository's only with the default docs folder."""
    if readme is not None:
        return readme
    return DEFAULT_README if docs.resolve() == DEFAULT_DOCS.resolve() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m vhct.reporting.ship", description=__doc__.splitlines()[0]
    )
    parser.add_argument("action", nargs="?", default="ship", choices=["ship", "render", "recover"])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results of the run (ship)")
    parser.add_argument("--figures", type=Path, default=DEFAULT_FIGURES, help="figures of the run (ship)")
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="folder to ship into")
    parser.add_argument(
        "--readme",
        type=Path,
        default=None,
        help="README whose findings block to update (default: README.md with the default --docs, else none)",
    )
    parser.add_argument(
        "--reduced", action="store_true", help="ship a run below the paper's scale, its headline saying so"
    )
    args = parser.parse_args(argv)
    readme = default_readme(args.docs, args.readme)
    try:
        if args.action == "ship":
            shipped = ship(args.results, args.figures, args.docs, readme, reduced=args.reduced)
            print(f"shipped {len(shipped)} files into {args.docs}")
        elif args.action == "render":
            rewrite(args.docs, readme)
        else:
            print("finished an interrupted ship" if recover(args.docs, readme) else "nothing to recover")
            return 0
    except FindingsError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"wrote {args.docs / DOCUMENT}" + (f" and the findings block of {readme}" if readme else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
