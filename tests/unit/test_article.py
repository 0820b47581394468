"""The replication article (vhct.article): built from the shipped docs/findings alone, in a temporary
checkout with no results/; its PDF text holds every statement's verdict and every comparison's
estimate as audit.json has them; a changed finding changes or removes the sentence that states it;
Typst markup in a printed value stays text; regret figures are drawn when the input holds curves."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from findings_run import write_setting_tables
from support import REPO, reseal

from vhct.article.build import build, compile_pdf
from vhct.article.figures import Placed
from vhct.article.record import collect
from vhct.article.redraw import main as redraw_main
from vhct.article.sources import read_sources
from vhct.article.typeset import render
from vhct.durations import duration
from vhct.reporting.costs import full_scale
from vhct.reporting.history import render as history_render
from vhct.reporting.plots import figure_job
from vhct.reporting.published import FindingsError
from vhct.reporting.render import format_number

FINDINGS = REPO / "docs" / "findings"
#: what a checkout needs besides src/ to build the article
CHECKOUT_FILES = ("CITATION.cff", "config", "docs/findings")
REMARKS = REPO / "src" / "vhct" / "article" / "templates" / "remarks.typ.j2"
#: any image will do where a test compiles a rendered source without drawing the figures
STAND_IN_IMAGE = REPO / "docs" / "figures" / "audit_forest.png"

needs_pdftotext = pytest.mark.skipif(
    shutil.which("pdftotext") is None,
    reason="pdftotext (poppler-utils) is not installed: no PDF text to read",
)


def checkout(tmp: Path) -> Path:
    """A checkout's files in ``tmp`` (no results/, no figures/): the shipped findings, the configs,
    the citation record."""
    root = tmp / "checkout"
    for name in CHECKOUT_FILES:
        src, dst = REPO / name, root / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    return root


def without_curves(root: Path) -> Path:
    """The checkout ``root`` with the shipped results cache (every setting's curve) removed."""
    for folder in (root / "docs/findings/aggregates").glob("*/settings"):
        shutil.rmtree(folder)
    return root


def pdf_text(pdf: Path) -> str:
    """The PDF's text on one line: a line broken after a hyphen joined, every run of spaces one."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(re.sub(r"-\n", "-", out).split())


def audit_data(root: Path) -> dict:
    return json.loads((root / "docs/findings/audit.json").read_text(encoding="utf-8"))


def write_audit(root: Path, data: dict) -> None:
    """Write the findings' audit and record it as the run's (:func:`support.reseal`)."""
    (root / "docs/findings/audit.json").write_text(json.dumps(data), encoding="utf-8")
    reseal(root / "docs/findings")


def source_of(root: Path) -> str:
    """The Typst source the article renders from ``root``'s findings (no figures drawn)."""
    article = collect(read_sources(root / "docs/findings", root), "shipped findings")
    stand_in = Placed(Path("forest.png"), 1.0)
    return render(article, [stand_in], {f.name: stand_in if f.present else None for f in article.figures})


def verdict_text(verdict: str, category: str) -> str:
    return verdict + (f" ({category})" if category and category != verdict else "")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The article built by its command line in a checkout without results/, and its PDF text."""
    root = checkout(tmp_path_factory.mktemp("article"))
    done = subprocess.run([sys.executable, "-m", "vhct.article"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (root / "results").exists()
    return root, root / "docs" / "article.pdf"


def test_builds_from_the_shipped_findings_alone(built):
    root, pdf = built
    assert pdf.read_bytes().startswith(b"%PDF")


@needs_pdftotext
def test_pdf_holds_every_verdict_and_estimate_of_the_audit(built):
    root, pdf = built
    text = pdf_text(pdf)
    audit = audit_data(root)
    assert text.count("Verdict: ") == len(audit["claims"])
    blocks = text.split("Verdict: ")[1:]  # one per statement, in the audit's order
    for claim, block in zip(audit["claims"], blocks, strict=True):
        cid = claim["claim"]["id"]
        said = verdict_text(claim["verdict"], claim["category"])
        assert cid.replace("-", "") in text.replace("-\n", "").replace("-", ""), cid  # its section names it
        assert block.startswith(said), (cid, block[:80])
        for exp in claim["experiments"]:
            for c in exp["comparisons"]:
                # an effect in units of a threshold of seconds is printed as a duration
                per = re.search(r" / ([0-9.e+]+) s$", c.get("effect_name") or "")
                shown = (lambda v: duration(v * float(per[1]))) if per else format_number  # noqa: B023
                if isinstance(c["effect"], float):
                    assert shown(c["effect"]) in block, (cid, c["label"], c["effect"])
                if c["ci_low"] is not None:
                    assert f"{shown(c['ci_low'])} to {shown(c['ci_high'])}" in block, cid
                assert c["verdict"] in block


@needs_pdftotext
def test_pdf_states_data_sets_costs_and_the_pending_sections(built):
    root, pdf = built
    text = pdf_text(pdf)
    sources = read_sources(root / "docs/findings", root)
    article = collect(sources, "shipped findings")
    assert article.data_sets and all(d.sha256 in text for d in article.data_sets)
    assert f"commit {sources.provenance.commit}" in text
    peak = sources.provenance.max_rss_mb  # the recorder's, in the re-shipped provenance
    assert f"peaked at {format_number(peak)} MB resident" in text
    assert "[Re] Optimum-statistical Collaboration" in text
    # the shipped findings carry the per-round curves; docs/upstream/ does not exist in the copy
    assert "not in the input" not in text and "Pending: the reports" in text
    assert all(f.present for f in article.figures) and text.count("band ±1 standard deviation") == len(
        article.figures
    )
    # the design, the statements decided by computation and the implementation choices, from the audit
    design = sources.audit.context.design
    assert design is not None and "The audit is confirmatory" in text and design.seed_span in text
    assert sources.audit.computed and sources.audit.sensitivity
    unhyphenated = text.replace("-", "")  # pdftotext drops the hyphen of an id broken at a line's end
    for c in sources.audit.computed:  # the computed statements' table: id and verdict
        assert c.claim.id.replace("-", "") in unhyphenated and c.verdict in text, c.claim.id
    for choice in sources.audit.sensitivity:
        assert choice.choice.id in text, choice.choice.id


def test_a_changed_finding_changes_its_sentence(tmp_path):
    root = checkout(tmp_path)
    before = source_of(root)
    data = audit_data(root)
    claim = next(c for c in data["claims"] if c["claim"]["id"] == "synthetic-vhct-among-fastest")
    comps = [c for e in claim["experiments"] for c in e["comparisons"]]
    # the deciding comparison (the weakest reproduced one: largest claimed p) made the opposite
    decider = max(comps, key=lambda c: c["p_claimed"])
    esc = lambda text: text.replace("-", "\\-")  # noqa: E731 (the source escapes Typst's markup)
    then = f"of {esc(decider['a'])} is lower than that of {esc(decider['b'])}: ratio of means "
    assert then + format_number(decider["effect"]) in before
    decider.update(effect=1.234, ci_low=1.111, ci_high=1.357)
    write_audit(root, data)
    after = source_of(root)
    now = f"of {esc(decider['a'])} is higher than that of {esc(decider['b'])}: ratio of means 1.234"
    assert now in after and now not in before
    assert then + format_number(decider["effect"]) not in after
    assert "1.234 (90% interval 1.111 to 1.357)" in after


def test_a_remark_goes_when_a_claim_it_rests_on_changes(tmp_path):
    root = checkout(tmp_path)
    remark = "VHCT's variance-adaptive confidence term pays at low noise"  # template text: not escaped
    data = audit_data(root)  # the findings it rests on: VHCT faster at low noise, not the fastest in Fig. 3
    claim = next(c for c in data["claims"] if c["claim"]["id"] == "vhct-faster-low-noise")
    claim.update(verdict="reproduced", category="reproduced")
    fig3 = next(c for c in data["claims"] if c["claim"]["id"] == "fig3-vhct-lowest")
    fig3.update(verdict="not reproduced", category="no effect of the claimed size")
    write_audit(root, data)
    assert remark in source_of(root)
    claim.update(verdict="not reproduced", category="the opposite")
    write_audit(root, data)
    after = source_of(root)
    assert remark not in after
    # the statements' table: the new verdict beside the id
    assert "[not reproduced: the opposite], [#text(size: 6pt)[vhct\\-faster\\-low\\-noise]]" in after


def test_every_claim_a_remark_names_is_in_the_shipped_audit():
    named = set()
    for group in re.findall(r"\[([^\]]*)\]", REMARKS.read_text(encoding="utf-8")):
        named |= set(re.findall(r'"([a-z0-9-]+)"', group))
    named -= {"reproduced", "not reproduced", "inconclusive", "mixed"}  # verdicts a remark may rest on
    ids = {c["claim"]["id"] for c in json.loads((FINDINGS / "audit.json").read_text())["claims"]}
    assert named and named <= ids, named - ids


@needs_pdftotext
def test_typst_markup_in_a_value_stays_text(tmp_path):
    root = without_curves(checkout(tmp_path))
    data = audit_data(root)
    quote = "#set page(width: 1cm) $x$ *not bold* [a] // <b> @c ~ \\ - = +"
    data["claims"][0]["claim"]["quote"] = quote
    write_audit(root, data)
    folder = tmp_path / "build"
    folder.mkdir()
    shutil.copy(STAND_IN_IMAGE, folder / "forest.png")
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(compile_pdf(source_of(root), folder, 0))
    assert quote in pdf_text(pdf)


def test_a_bad_input_is_one_line_and_writes_nothing(tmp_path):
    root = checkout(tmp_path)
    (root / "docs/findings/audit.json").unlink()
    done = subprocess.run([sys.executable, "-m", "vhct.article"], cwd=root, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "audit.json" in done.stderr
    assert not (root / "docs/article.pdf").exists()
    with pytest.raises(FindingsError, match="no such folder"):
        read_sources(root / "nowhere", root)


def test_full_scale_cost_is_measured_seconds_per_round_times_rounds_and_seeds():
    sources = read_sources(FINDINGS, REPO)
    scale = full_scale(REPO / "config/paper.yaml", sources.timings, sources.audit.context.experiments)
    row = next(r for r in scale.rows if r.experiment == "garland" and r.setting == "VHCT-rho0.75")
    timing = sources.timings["garland"]
    runs = timing[timing["setting"] == "VHCT-rho0.75"]
    per_round = runs["step_seconds_sum"].sum() / runs["rounds"].sum()
    assert row.seconds == pytest.approx(per_round * row.rounds * row.seeds)
    assert not row.extrapolated
    bo = next(r for r in scale.rows if r.experiment == "garland" and r.setting == "BO")
    assert bo.extrapolated == (bo.rounds > bo.measured_rounds)
    assert scale.total_seconds == pytest.approx(sum(r.seconds for r in scale.rows if r.seconds is not None))


def test_a_regret_figure_is_drawn_when_the_input_holds_its_curves(tmp_path):
    """Curves written by the pipeline's own curve and timing writers for fig3a_garland's settings
    (``findings_run.write_setting_tables``): the article draws that figure and no longer lists it as
    absent."""
    root = without_curves(checkout(tmp_path))
    sources = read_sources(root / "docs/findings", root)
    figure = next(f for f in collect(sources, "results").figures if f.name == "fig3a_garland")
    assert not figure.present
    for experiment, by_setting in figure.curves.items():
        info = sources.audit.context.experiments[experiment].settings
        write_setting_tables(root / "docs/findings", experiment, {s: info[s] for s in by_setting})
    reseal(root / "docs/findings")
    out = tmp_path / "article.pdf"
    source = tmp_path / "article.typ"
    build(root / "docs/findings", out, "results", root, source)
    sources = read_sources(root / "docs/findings", root)
    assert next(f for f in collect(sources, "results").figures if f.name == "fig3a_garland").present
    text = source.read_text(encoding="utf-8")
    assert 'image("fig3a_garland.png"' in text
    absent = text.split("The per-round curves of", 1)[1].split("are not in the input", 1)[0]
    assert "fig3a\\_garland" not in absent and "fig3b\\_landmine" in absent


def test_every_figure_of_the_shipped_run_is_redrawn_from_the_results_cache_as_from_the_results(tmp_path):
    """Issue 38 item 4: with each setting's curve and timing aggregates in the findings (as ``make
    findings`` ships them), ``python -m vhct.article.redraw`` draws every figure the run made, and a
    regret figure drawn from the shipped copy has the bytes of the one drawn from the run's results."""
    root = checkout(tmp_path)
    findings_dir = root / "docs/findings"
    sources = read_sources(findings_dir, root)
    results = tmp_path / "results"
    for name, exp in sources.audit.context.experiments.items():
        write_setting_tables(results, name, exp.settings)
    shutil.copytree(results / "aggregates", findings_dir / "aggregates", dirs_exist_ok=True)  # as ship copies
    reseal(findings_dir)
    out = tmp_path / "redrawn"
    assert redraw_main(["--findings", str(findings_dir), "--out", str(out), "--checkout", str(root)]) == 0
    made = sources.provenance.figures
    assert sorted(p.stem for p in out.glob("*.png")) == sorted(made)
    figure = next(f for f in collect(sources, "shipped findings").figures if f.name == "fig3a_garland")
    from_results = {
        e: {s: str(results / p.relative_to(findings_dir)) for s, p in by.items()}
        for e, by in figure.curves.items()
    }
    figure_job(figure.spec, from_results, tmp_path / "a.pdf", tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes() == (out / "fig3a_garland.png").read_bytes()


def test_a_run_that_recorded_the_summary_figure_has_it_redrawn_from_the_shipped_audit(tmp_path):
    """A run of this version records the audit's summary figure among its figures (``AUDIT_FIGURES``):
    ``redraw`` draws it from the shipped audit, as it draws the forest."""
    root = checkout(tmp_path)
    findings_dir = root / "docs/findings"
    sources = read_sources(findings_dir, root)
    for name, exp in sources.audit.context.experiments.items():
        write_setting_tables(findings_dir, name, exp.settings)
    prov_path = findings_dir / "provenance.json"
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    assert "audit_summary" not in prov["figures"]  # the shipped run predates it
    prov["figures"].append("audit_summary")
    prov_path.write_text(json.dumps(prov), encoding="utf-8")
    reseal(findings_dir)  # the curves written above, as such a run records them
    out = tmp_path / "redrawn"
    assert redraw_main(["--findings", str(findings_dir), "--out", str(out), "--checkout", str(root)]) == 0
    assert (out / "audit_summary.png").stat().st_size > 0 and (out / "audit_summary.pdf").is_file()


def test_redrawing_without_the_curves_is_refused_naming_the_figures(tmp_path, capsys):
    root = without_curves(checkout(tmp_path))
    out = tmp_path / "redrawn"
    assert (
        redraw_main(["--findings", str(root / "docs/findings"), "--out", str(out), "--checkout", str(root)])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fig3a_garland (" in err and "not in the input" in err
    assert not out.exists()


def test_the_authors_section_lists_each_upstream_report_by_its_title_and_not_the_index(tmp_path):
    root = checkout(tmp_path)
    shutil.copytree(REPO / "docs/upstream", root / "docs/upstream")
    text = source_of(root)
    section = text.split("= Communication with the original authors", 1)[1].split("\n= ", 1)[0]
    reports = sorted(p for p in (REPO / "docs/upstream").glob("*.md") if p.name != "README.md")
    assert reports and section.count('#raw("docs/upstream/') == len(reports)
    for report in reports:
        title = report.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        assert f'#raw("docs/upstream/{report.name}")' in section and title.split(":")[0] in section
    assert "README.md" not in section and "no contact with the original authors" in section


def test_memory_is_the_provenance_records_peak_or_said_not_recorded(tmp_path):
    """The computational requirements give the recorder's peak memory when the record has one, and
    say it was not recorded when it has none."""
    root = checkout(tmp_path)
    path = root / "docs/findings/provenance.json"
    prov = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**prov, "max_rss_mb": 1234.5}), encoding="utf-8")
    assert f"peaked at {format_number(1234.5)} MB resident" in source_of(root)
    path.write_text(json.dumps({**prov, "max_rss_mb": None}), encoding="utf-8")
    text = source_of(root)
    assert "Memory: not recorded" in text and "peaked at" not in text


def test_the_design_history_is_one_sentence_where_the_checkout_has_no_git_record(tmp_path):
    """Built in a folder that is no git repository, the article's design history says so in one
    sentence (and has no appendix); built in this repository, it tells the history of the shipped
    run, the record docs/findings.md's section is rendered from."""
    source = source_of(checkout(tmp_path))
    section = source[source.index("== Design history") : source.index("= Computational requirements")]
    said = [line for line in section.splitlines()[1:] if line and not line.startswith(("#", "]"))]
    assert said == [
        "The design history (what had been seen before the analysis plan of these findings, read from "
        "the repository's git record) is not told here: the article was built outside the top folder "
        "of a git repository."
    ]
    assert "Appendix: design history" not in source


def _full_history() -> bool:
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    return shutil.which("git") is not None and done.returncode == 0 and done.stdout.strip() == "false"


@pytest.mark.skipif(not _full_history(), reason="needs this repository's full git history")
def test_the_article_and_the_findings_tell_the_same_design_history():
    article = collect(read_sources(FINDINGS, REPO), "shipped findings")
    findings_md = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    h = article.history
    assert h is not None and h.run.commit == article.meta.commit
    assert history_render(h) in findings_md
