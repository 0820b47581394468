"""Ship a finished pipeline run's findings into the repository: ``docs/findings.md``, its data and figures.

    python -m vhct.reporting.ship                # after `make paper-local` (this is `make findings`)
    python -m vhct.reporting.ship --results results/mine --figures figures/mine   # another config's run
    python -m vhct.reporting.ship --reduced      # a reduced-scale run, published as one
    python -m vhct.reporting.ship render         # re-render docs/findings.md and the README block
    python -m vhct.reporting.ship recover        # finish an interrupted ship, remove its staging

``ship`` copies the run's audit JSON and verdict table (a CSV, when the run made one), final and
timing aggregates, the per-round curve and timing aggregates of each setting its figures draw (the
results cache the article and ``make findings-figures`` draw from; the ones its provenance record
lists) and provenance record into ``docs/findings/`` and the PNGs the document links into
``docs/figures/``, renders ``docs/findings.md`` (``vhct.reporting.findings.render``) and the README's
findings block (between ``README_BEGIN`` and ``README_END``). It refuses, changing nothing
(``vhct.reporting.ship_checks``): a file whose sha256 is not the one the provenance recorder fixed
when the run ended (content, not times: ``touch -r`` does not fool it), an audit of another run id or
config, an aggregate of other settings or seeds, mixed package versions (provenance, audit, run
sidecars), and a run below the paper's scale (an audited experiment under the claims' largest
``min_seeds``) unless ``--reduced``; the README block of a reduced run, rendered from the shipped audit
alone, says "At reduced scale".

Crash safety: everything new is staged in ``docs/.findings-staging-<id>/``; the journal
``docs/.findings-journal.json`` (the stage, the entries swapped, whether the README is) is written
atomically as the commit point; then each entry is renamed into place and the journal and stage
removed, every step idempotent. Every command first rolls a journal forward and deletes other
stages, so after a kill ``docs/`` and the README are all new or all old (four names: no single
rename or symlink swap would do). A lock on the docs folder serializes ships. A journal names
nothing outside its folder (which README is the command's ``--readme``, so one committed by mistake
never touches another clone's); one naming anything else is refused in one line. ``--docs DIR``
touches nothing outside DIR (the repository's README only with the default ``docs``); a ``--docs``
that is a file is refused.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from itertools import product
from pathlib import Path

from vhct.pipeline.aggregate import FINAL_COLUMNS
from vhct.pipeline.files import fsync_dir
from vhct.pipeline.layout import (
    FINAL_TABLE,
    SETTING_TABLES,
    TIMING_TABLE,
    VERDICTS_CSV,
    Layout,
    ResultsFolder,
)
from vhct.pipeline.provenance import ProvenanceError, read_provenance
from vhct.reporting.findings import (
    DATA_DIR,
    DOCUMENT,
    FIGURES_DIR,
    README_BEGIN,
    README_END,
    FindingsError,
    read_audit,
    read_json,
    render,
)
from vhct.reporting.published import FINITE, check_one_run, read_table
from vhct.reporting.render import render_readme
from vhct.reporting.ship_checks import check_hashes, check_scale, check_versions

#: the folders of the run `make findings` ships by default: `make paper-local`'s (config/paper-local.yaml's
#: folders in results/ and figures/, see vhct.pipeline.config.Config.folder)
DEFAULT_RESULTS = Path(Layout.of("paper-local").results.root)
DEFAULT_FIGURES = Path(Layout.of("paper-local").figures)
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
    """The README's findings block (``readme.j2``) from the audit shipped in ``docs``, with its markers."""
    audit = read_audit(Path(docs) / ResultsFolder(DATA_DIR).audit_json)
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
    """The commit point of a swap: its stage's name, the entries it replaces (:data:`SWAPPED`) and
    whether it replaces the README (the command names which). One writer, :func:`_commit`; one reader."""

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
        """The journal of ``docs``; one naming anything but this folder's stage and entries is refused."""
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
            and len(set(names)) == len(names)
            and all(isinstance(n, str) and n in SWAPPED for n in names)
        ):
            raise refuse(f"it names {names!r}, not entries among {', '.join(SWAPPED)}")
        if not isinstance(readme, bool):
            raise refuse(f"its 'readme' is {readme!r}, not true or false")
        for name in [*names, NEW_README]:
            if (folder / name).is_symlink():
                raise refuse(f"{stage}/{name} is a symbolic link")
        return cls(stage=stage, names=tuple(names), readme=readme)


def _roll_forward(docs: Path, journal: Journal, readme: Path | None) -> None:
    """Finish the journal's swap (each step repeatable after a kill); its README is ``readme``."""
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
    """Roll a journal forward, delete leftover stages (not links); True if a swap was finished."""
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
    """Finish a ship a kill interrupted (``readme``: the one it was given); True if one was finished."""
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


def _swap(docs: Path, readme: Path | None, names: Sequence[str], fill: Callable[[Path], None]) -> None:
    """Stage what ``fill`` writes into a new stage of ``docs`` and swap ``names`` (and the README) in;
    a README without the markers is refused before anything changes, a failed fill leaves no stage."""
    if readme is not None:
        with_readme_block(readme.read_text(encoding="utf-8"), "")
    try:
        docs.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FindingsError(f"cannot create the docs folder {docs} ({exc.strerror or exc})") from None
    with _locked(docs):
        _recover(docs, readme)
        stage = Path(tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=docs))
        try:
            fill(stage)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        _commit(docs, stage, names, readme)


def _stage_readme(stage: Path, readme: Path | None, audited: Path) -> None:
    """The README with its block rendered from the audit shipped in ``audited``, into the stage."""
    if readme is not None:
        text = with_readme_block(readme.read_text(encoding="utf-8"), readme_block(audited))
        (stage / NEW_README).write_text(text, encoding="utf-8")


# ---------------------------------------------------------------- ship and render
def ship(
    results: Path | str,
    figures: Path | str,
    docs: Path | str,
    readme: Path | str | None = None,
    reduced: bool = False,
) -> list[Path]:
    """Ship one finished run into ``docs``: its audit JSON and verdict table, aggregates, provenance
    record, the PNGs of its figures the document links, the document and (given ``readme``) the
    README's block; all or nothing (the module's docstring); return the shipped files."""
    results, figures, docs = Path(results), Path(figures), docs_folder(docs)
    readme = Path(readme) if readme is not None else None
    src, dst = ResultsFolder(str(results)), ResultsFolder(DATA_DIR)
    audit_path, prov_path = Path(src.audit_json), Path(src.provenance)
    try:
        audit, prov = read_audit(audit_path), read_provenance(prov_path)
    except ProvenanceError as exc:
        raise FindingsError(str(exc)) from exc
    data = {audit_path: Path(dst.audit_json), prov_path: Path(dst.provenance)}
    made = set(prov.output_sha256.results)
    # the audit's verdict table, when the run made it (the record hashed it; an audit older than the
    # table wrote none, and its findings are shipped without one)
    if VERDICTS_CSV in made:
        data[Path(src.verdicts)] = Path(dst.verdicts)
    # the curves the run made (those its figures draw; the provenance record hashed each), not every
    # audited setting's: a setting no figure draws has none
    for name, exp in audit.context.experiments.items():
        for table in (FINAL_TABLE, TIMING_TABLE):
            data[Path(src.aggregate(name, table))] = Path(dst.aggregate(name, table))
        for setting, table in product(exp.settings, SETTING_TABLES):
            if ResultsFolder("").setting_table(name, setting, table) in made:
                data[Path(src.setting_table(name, setting, table))] = Path(
                    dst.setting_table(name, setting, table)
                )
    final_paths = {name: Path(src.aggregate(name, FINAL_TABLE)) for name in audit.context.experiments}
    pngs = {figures / f"{name}.png": Path(FIGURES_DIR) / f"{name}.png" for name in prov.figures}
    missing = [str(p) for p in (*data, *pngs) if not p.is_file()]
    if missing:
        raise FindingsError(
            f"missing input(s) of the findings (run `make paper-local` first): {', '.join(missing)}"
        )
    finals = {
        name: read_table(path, FINAL_COLUMNS, FINITE[FINAL_TABLE]) for name, path in final_paths.items()
    }
    check_one_run(audit, prov, audit_path, finals)
    outputs = {p: ("results", p.relative_to(results).as_posix()) for p in data if p != prov_path}
    outputs.update({p: ("figures", p.name) for p in pngs})
    check_hashes(prov, outputs)
    check_versions(prov, audit, audit_path, results)
    check_scale(audit, audit_path, reduced)
    linked: set[str] = set()

    def fill(stage: Path) -> None:
        for source, target in {**data, **pngs}.items():
            (stage / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, stage / target)
            _step()
        (stage / FIGURES_DIR).mkdir(exist_ok=True)
        text = render(stage, docs.parent)
        linked.update(FIGURE_LINK.findall(text))
        unshipped = sorted(link for link in linked if not (stage / link).is_file())
        if unshipped:
            raise FindingsError(f"the document links figure(s) the run did not make: {', '.join(unshipped)}")
        for target in pngs.values():
            if str(target) not in linked:
                (stage / target).unlink()
        (stage / DOCUMENT).write_text(text, encoding="utf-8")
        _step()
        if readme is not None:
            _stage_readme(stage, readme, stage)
            _step()

    _swap(docs, readme, [DATA_DIR, FIGURES_DIR, DOCUMENT], fill)
    shipped = [docs / t for t in data.values()] + [docs / t for t in pngs.values() if str(t) in linked]
    return [*shipped, docs / DOCUMENT]


def rewrite(docs: Path | str, readme: Path | str | None = None) -> Path:
    """Render ``docs/findings.md`` again from the shipped files and, given ``readme``, its findings
    block; swapped in through the same journal as :func:`ship`."""
    docs = docs_folder(docs)
    readme = Path(readme) if readme is not None else None
    text = render(docs)

    def fill(stage: Path) -> None:
        (stage / DOCUMENT).write_text(text, encoding="utf-8")
        _stage_readme(stage, readme, docs)

    _swap(docs, readme, [DOCUMENT], fill)
    return docs / DOCUMENT


def default_readme(docs: Path, readme: Path | None) -> Path | None:
    """The README to edit: the one named, else the repository's only with the default docs folder."""
    if readme is not None:
        return readme
    return DEFAULT_README if docs.resolve() == DEFAULT_DOCS.resolve() else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vhct.reporting.ship", description=__doc__.split("\n")[0])
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
    reduced = "ship a run below the paper's scale, its headline saying so"
    parser.add_argument("--reduced", action="store_true", help=reduced)
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
