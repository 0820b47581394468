"""The one reader of a published folder (vhct.reporting.published) and the commands built on it (issue
48 items 1-3): every file checked against the provenance record's sha256 before use, every value of
its type, every malformed file refused in one line with exit 2 before anything is drawn, every value
printed as text, and the config read as the run read it.

Each probe's command is in its test's docstring; the probes run on a copy of a made-up run's findings,
with the curves of its figures (conftest's ``curved_root``), in a checkout without results/. One test
reads the shipped findings (``docs/findings``), whatever run they hold."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from support import MADE_UP_SIZE, REPO, reseal

from vhct.article.__main__ import main as article_main
from vhct.article.build import compile_pdf
from vhct.article.figures import Placed
from vhct.article.record import collect
from vhct.article.redraw import main as redraw_main
from vhct.article.sources import ArticleError, read_sources
from vhct.article.typeset import check_text, render
from vhct.reporting import findings as findings_document
from vhct.reporting.findings import DATA_DIR, DOCUMENT, FIGURES_DIR
from vhct.reporting.published import FindingsError, read_published
from vhct.reporting.ship import readme_block

DOCS = REPO / "docs"
#: the README's lines a reader sees first on GitHub (about a screen)
README_FIRST_SCREEN_LINES = 25
STAND_IN_IMAGE = REPO / "docs" / "figures" / "audit_forest.png"

needs_pdftotext = pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext is not installed")


@pytest.fixture
def root(curved_root: Path, tmp_path: Path) -> Path:
    """A copy of a checkout (citation record, configs, a made-up run's findings with every curve) with no
    results/ and no git."""
    return Path(shutil.copytree(curved_root, tmp_path / "checkout"))


def findings(root: Path) -> Path:
    return root / "docs" / "findings"


def a_curve(root: Path) -> Path:
    """One setting's curve table in ``root``'s findings (relative to the folder): the first read."""
    curves = read_published(findings(root)).curves
    return next(iter(next(iter(curves.values())).values())).regret.relative_to(findings(root))


def edit_audit(root: Path, change) -> None:
    path = findings(root) / "audit.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def first_comparison(data: dict) -> dict:
    return next(c for claim in data["claims"] for e in claim["experiments"] for c in e["comparisons"])


def redraw(root: Path, capsys) -> tuple[int, str, Path]:
    out = root / "redrawn"
    code = redraw_main(["--findings", str(findings(root)), "--out", str(out), "--checkout", str(root)])
    return code, capsys.readouterr().err, out


def refused_in_one_line(err: str, *names: str) -> None:
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    for name in names:
        assert name in lines[0], (name, lines[0])


def test_the_shipped_findings_pass_every_check_and_are_what_the_document_renders():
    """The one test of the shipped findings, whatever run they hold: the one reader accepts them (every
    file's sha256 as recorded, every value of its type, audit and provenance of one run), the document
    and the README's block are what the generator makes of them, every file they link exists, and the
    run's code was committed, in this checkout's history when it has one."""
    found = read_published(DOCS / DATA_DIR)
    assert found.audit.context.run_id == found.provenance.run_id
    commit = found.provenance.commit
    assert (
        commit is not None
        and re.fullmatch(r"[0-9a-f]{40}", commit)
        and not found.provenance.uncommitted_changes
    )
    if (REPO / ".git").exists():
        ancestry = ["git", "-C", str(REPO), "merge-base", "--is-ancestor", commit, "HEAD"]
        assert subprocess.run(ancestry, check=False).returncode == 0, f"{commit} not in history"
    shipped, rendered = (DOCS / DOCUMENT).read_text(encoding="utf-8"), findings_document.render(DOCS)
    if "## Design history\n\nThe design history (" in rendered:  # no full git history here (a shallow
        # clone, an export): the section says so; the rest is still what the shipped files give
        shipped, rendered = (
            re.sub(r"## Design history\n.*?(?=\n## )", "", t, flags=re.S) for t in (shipped, rendered)
        )
    assert shipped == rendered
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    # the block on the README's first screen, the findings linked; its tally the README's only one
    # (issue 51: the quick start's is in docs/pipeline.md)
    first_screen = "\n".join(readme.splitlines()[:README_FIRST_SCREEN_LINES])
    assert readme_block(DOCS) in first_screen and "](docs/findings.md)" in first_screen
    tally = re.compile(r"\b\d+\s+reproduced\b")
    assert len(tally.findall(readme_block(DOCS))) == len(tally.findall(readme)) == 1
    assert "quick start's audit" in (DOCS / "pipeline.md").read_text(encoding="utf-8")
    text = (DOCS / DOCUMENT).read_text(encoding="utf-8")
    links = [link for link in re.findall(r"\]\(([^)#\s]+)\)", text) if "://" not in link]
    assert links and all((DOCS / link).exists() for link in links), links
    for png in (DOCS / FIGURES_DIR).glob("*.png"):  # every figure shipped is shown
        assert f"{FIGURES_DIR}/{png.name}" in links, png.name


#: an effect printed as a fraction of a threshold of seconds ("/ 3600 s 0.001854"), not as a duration
PER_THRESHOLD_PRINTED = re.compile(r"/ \d+ s \d")


@needs_pdftotext
def test_the_shipped_documents_print_durations_never_fractions_of_a_threshold(tmp_path):
    """Issue 50 item 5: the findings, the README and the article built from the shipped findings
    (``make article``; its figures stood in for) state wall times in hours, minutes and seconds ("is
    6.67 s, 90% CI [6.02 s, 7.22 s], against a threshold of 1 h"), never "/ 3600 s 0.001854"."""
    article = collect(read_sources(DOCS / DATA_DIR, REPO), "shipped findings")
    shutil.copy(STAND_IN_IMAGE, tmp_path / "forest.png")
    stand_in = Placed(Path("forest.png"), 1.0)
    source = render(article, [stand_in], {f.name: stand_in for f in article.figures})
    pdf = tmp_path / "article.pdf"
    pdf.write_bytes(compile_pdf(source, tmp_path, 0))
    printed = subprocess.run(["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True).stdout
    texts = {name: (DOCS / name).read_text(encoding="utf-8") for name in (DOCUMENT, "../README.md")}
    for name, text in {**texts, "article": printed}.items():
        found = [m.group(0) for m in PER_THRESHOLD_PRINTED.finditer(re.sub(r"\s+", " ", text))]
        assert not found, (name, found)
    for text in (texts[DOCUMENT], re.sub(r"\s+", " ", printed)):  # the wall-time reasons, in durations
        assert "against a threshold of 1 h;" in text


def test_a_forged_curve_is_refused_before_anything_is_drawn(root, capsys):
    """Probe: scale VHCT's Garland curve by 0.001 in docs/findings/aggregates/garland/settings/
    VHCT-rho0.75/regret.csv, then ``python -m vhct.article.redraw``: it drew VHCT flat at 0, exit 0."""
    curve = a_curve(root)
    path = findings(root) / curve
    table = pd.read_csv(path)
    table["mean"] *= 0.001
    table.to_csv(path, index=False)
    code, err, out = redraw(root, capsys)
    assert code == 2 and not out.exists()
    refused_in_one_line(err, str(curve), "sha256", "make findings")


def test_a_forged_verdict_with_zeroed_hashes_is_refused(root, capsys):
    """Probe: a claim's verdict set to "reproduced" with a made-up reason and every recorded hash zeroed,
    then ``python -m vhct.article``: it printed the forged verdict on page 1, exit 0."""

    def forge(data: dict) -> None:
        claim = next(c for c in data["claims"] if c["verdict"] == "not reproduced")
        claim.update(verdict="reproduced", category="reproduced", reason="it just works")

    edit_audit(root, forge)
    prov_path = findings(root) / "provenance.json"
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    for part in prov["output_sha256"].values():
        for name in part:
            part[name] = "0" * 64
    prov_path.write_text(json.dumps(prov), encoding="utf-8")
    out = root / "article.pdf"
    assert article_main(["--findings", str(findings(root)), "--out", str(out), "--checkout", str(root)]) == 2
    refused_in_one_line(capsys.readouterr().err, "audit.json", "sha256")
    assert not out.exists()


def test_an_audit_of_another_run_is_refused_although_its_hash_is_recorded(root):
    """The provenance record against the audit's: an audit naming another run id, recorded by hash
    (as a record made by hand could), is refused naming both runs."""
    edit_audit(root, lambda data: data["context"].update(run_id="another-run"))
    reseal(findings(root))
    with pytest.raises(FindingsError, match="another-run"):
        read_published(findings(root))


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d["claims"][0].update(verdict="totally fine"), "verdict 'totally fine'"),
        (lambda d: d["claims"][0].update(category="fine by us"), "category 'fine by us'"),
        (lambda d: first_comparison(d).update(effect="nan"), "effect nan is not finite"),
        (lambda d: first_comparison(d).update(mean_a="inf"), "mean_a inf is not finite"),
        (lambda d: first_comparison(d).update(p_claimed=1.5), "p_claimed 1.5 is not in [0, 1]"),
        (lambda d: d["sensitivity"][0]["claims"][0].update(variant_verdict="great"), "verdict 'great'"),
    ],
)
def test_a_value_outside_its_type_is_refused_naming_where(root, capsys, change, named):
    """Probes: a verdict "totally fine", ``effect: NaN``, ``mean_a: Infinity`` in audit.json (the hash
    recorded again, as a record made by hand could): the article built and printed "nan"."""
    edit_audit(root, change)
    reseal(findings(root))
    out = root / "article.pdf"
    assert article_main(["--findings", str(findings(root)), "--out", str(out), "--checkout", str(root)]) == 2
    refused_in_one_line(capsys.readouterr().err, "audit.json", named)
    assert not out.exists()


def _nan_rows(path: Path) -> None:
    table = pd.read_csv(path)
    table.loc[10:20, "mean"] = float("nan")
    table.to_csv(path, index=False)


def _inf_rows(path: Path) -> None:
    table = pd.read_csv(path)
    table.loc[5, "std"] = float("inf")
    table.to_csv(path, index=False)


def _renamed(path: Path) -> None:
    pd.read_csv(path).rename(columns={"mean": "avg"}).to_csv(path, index=False)


def _truncated(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


MALFORMED = {
    "rows set to nan": (_nan_rows, "column mean is not a finite number"),
    "an inf value": (_inf_rows, "column std is not a finite number"),
    "mean renamed avg": (_renamed, "lacks column(s) mean"),
    "truncated": (_truncated, "not a finite number"),
    "header only": (lambda p: p.write_text(p.read_text().splitlines()[0] + "\n"), "a header and no rows"),
    "empty": (lambda p: p.write_bytes(b""), "empty file"),
    "random bytes": (lambda p: p.write_bytes(bytes(range(256)) * 8), "cannot read it as a CSV table"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_curve_table_is_refused_in_one_line_before_any_figure(root, capsys, case):
    """Probes, each on VHCT's Garland curve (its hash recorded again), then ``python -m
    vhct.article.redraw``: rows set to nan (a gap), an inf (dropped), ``mean`` renamed ``avg`` (the
    line gone, the legend kept), truncated (``ValueError`` traceback), header-only, empty
    (``EmptyDataError``), random bytes (``UnicodeDecodeError``): each drew or crashed with exit 1."""
    damage, named = MALFORMED[case]
    curve = a_curve(root)
    damage(findings(root) / curve)
    reseal(findings(root))
    code, err, out = redraw(root, capsys)
    assert code == 2 and not out.exists()
    refused_in_one_line(err, str(curve), named)


def test_a_missing_timing_table_is_refused_before_any_figure(root, capsys):
    """Probe: a setting's timing.csv removed: it was reported after a figure had been drawn."""
    timing = a_curve(root).with_name("timing.csv")
    (findings(root) / timing).unlink()
    code, err, out = redraw(root, capsys)
    assert code == 2 and not out.exists()
    refused_in_one_line(err, str(timing))


def test_an_edited_config_is_refused_outside_git_and_read_at_the_runs_commit_inside(root):
    """Probe: redraw drew the "shipped" figures from today's edited config. The config is taken as the
    run read it: with the checkout's copy edited and no history, refused naming it; in a git checkout,
    the file at the recorded commit (its hash checked) is read, not the edited one."""
    leaf = json.loads((findings(root) / "provenance.json").read_text())["config_files"][-1]
    config = root / leaf
    original = config.read_text(encoding="utf-8")
    config.write_text(original + "\n# edited after the run\n", encoding="utf-8")
    with pytest.raises(ArticleError, match=leaf):
        read_sources(findings(root), root)
    config.write_text(original, encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "config"], check=True)
    subprocess.run([*git, "commit", "-qm", "the run's configs"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    prov_path = findings(root) / "provenance.json"
    prov_path.write_text(json.dumps({**json.loads(prov_path.read_text()), "commit": head}))
    config.write_text(original.replace("base:", "# a comment\nbase:", 1), encoding="utf-8")
    sources = read_sources(findings(root), root)
    assert sources.config_files[leaf].decode("utf-8") == original
    assert leaf in collect(sources, "shipped findings").config_changed


def test_out_at_a_folder_is_refused_before_building(root, capsys):
    """Probe: ``python -m vhct.article --out <a folder>`` failed after 64 s of building."""
    out = root / "docs"
    assert article_main(["--findings", str(findings(root)), "--out", str(out), "--checkout", str(root)]) == 2
    refused_in_one_line(capsys.readouterr().err, "a folder")


def test_a_paragraph_break_in_a_quote_is_refused_naming_claim_and_field(root, capsys):
    """Probe: a paragraph break in a claim's quote failed the build after 77 s with "unclosed
    delimiter", naming neither claim nor field."""
    edit_audit(root, lambda d: d["claims"][0]["claim"].update(quote=f"first\n\nsecond {MADE_UP_SIZE}"))
    reseal(findings(root))
    claim = json.loads((findings(root) / "audit.json").read_text())["claims"][0]["claim"]["id"]
    out = root / "article.pdf"
    assert article_main(["--findings", str(findings(root)), "--out", str(out), "--checkout", str(root)]) == 2
    refused_in_one_line(capsys.readouterr().err, f"statement {claim}: quote", "paragraph break")


#: the markup the strings of the record are given (the n-th string the n-th piece, round): a call,
#: strong and emphasized text, raw, maths, a label, a reference, a heading
MARKUP_PIECES = ("#emph[X]", "*b*", "_i_", "`c`", "$m$", "<l>", "@r", "=h")


def _marked(value, counter: list[int]):
    """``value`` with every string replaced by a numbered piece of markup."""
    if isinstance(value, str):
        counter[0] += 1
        return f"Q{counter[0]}Q" + MARKUP_PIECES[counter[0] % len(MARKUP_PIECES)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and not isinstance(value, Path):
        names = [f.name for f in dataclasses.fields(value) if f.init]
        return dataclasses.replace(value, **{n: _marked(getattr(value, n), counter) for n in names})
    if isinstance(value, dict):
        return {k: _marked(v, counter) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(v, counter) for v in value]
    if isinstance(value, tuple):
        return tuple(_marked(v, counter) for v in value)
    return value


@needs_pdftotext
def test_markup_in_every_string_of_the_record_prints_as_text(root, tmp_path):
    """Probe: a provenance command holding ``#text(fill: red, size: 30pt)[INJECTED-MARKUP]`` in
    backticks printed as large red text on page 1. Every string of the article's record (its meta,
    statements, settings, data sets, ...) replaced by markup: each one the PDF prints, it prints as
    written."""
    article = collect(read_sources(findings(root), root), "shipped findings")
    counter = [0]
    marked = dataclasses.replace(
        article,
        meta=_marked(article.meta, counter),
        statements=_marked(article.statements, counter),
        settings=_marked(article.settings, counter),
        data_sets=_marked(article.data_sets, counter),
        upstream=_marked(article.upstream, counter),
        config_files=_marked(article.config_files, counter),
    )
    check_text(marked)
    folder = tmp_path / "build"
    folder.mkdir()
    shutil.copy(STAND_IN_IMAGE, folder / "forest.png")
    pdf = tmp_path / "a.pdf"
    stand_in = Placed(Path("forest.png"), 1.0)
    source = render(marked, [stand_in], {f.name: stand_in for f in marked.figures})
    pdf.write_bytes(compile_pdf(source, folder, 0))
    text = "".join(
        subprocess.run(
            ["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True
        ).stdout.split()
    ).replace("-", "")
    printed = [n for n in range(1, counter[0] + 1) if f"Q{n}Q" in text]
    assert len(printed) > 50  # the meta, every statement's quote and reason, the settings, ...
    for found in re.finditer(r"Q(\d+)Q", text):  # each string's piece of markup, as text
        piece = MARKUP_PIECES[int(found.group(1)) % len(MARKUP_PIECES)]
        assert text[found.end() :].startswith(piece), text[found.start() : found.end() + len(piece)]


@needs_pdftotext
def test_markup_in_the_recorded_command_prints_as_text(root, tmp_path):
    """Probe: the provenance record's command holding
    ``\\`#text(fill: red, size: 30pt)[INJECTED-MARKUP]\\``` printed as large red text on page 1."""
    payload = "make `#text(fill: red, size: 30pt)[INJECTED-MARKUP]` x"
    path = findings(root) / "provenance.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "command": payload}), encoding="utf-8")
    article = collect(read_sources(findings(root), root), "shipped findings")
    folder = tmp_path / "build"
    folder.mkdir()
    shutil.copy(STAND_IN_IMAGE, folder / "forest.png")
    pdf = tmp_path / "a.pdf"
    stand_in = Placed(Path("forest.png"), 1.0)
    source = render(article, [stand_in], {f.name: stand_in for f in article.figures})
    pdf.write_bytes(compile_pdf(source, folder, 0))
    page = subprocess.run(["pdftotext", "-l", "1", str(pdf), "-"], capture_output=True, text=True, check=True)
    assert "".join(payload.split()) in "".join(page.stdout.split())


def test_the_typst_source_is_kept_when_typst_refuses_it(root, tmp_path, monkeypatch):
    """Probe: ``--typst`` wrote nothing when the build failed in Typst. Now the source is written
    first, so the line Typst names can be read; the PDF is not written."""
    from vhct.article import build as article_build

    monkeypatch.setattr(article_build, "typst_source", lambda *args: "#let x = (\n")  # unclosed
    kept, out = tmp_path / "article.typ", tmp_path / "article.pdf"
    with pytest.raises(ArticleError, match="Typst refused"):
        article_build.build(findings(root), out, "findings", root, kept, progress=lambda message: None)
    assert kept.read_text(encoding="utf-8") == "#let x = (\n" and not out.exists()
