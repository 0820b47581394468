"""The replication article (vhct.article), built from a made-up run's findings
(``findings_run.made_up_checkout``) in a checkout with no results/: its PDF text holds every
statement's verdict and every comparison's estimate as the audit has them; a changed finding changes
the sentence that states it; a remark is printed only while the claims it rests on have their
verdicts; Typst markup in a printed value stays text; regret figures are drawn when the input holds
their curves. Nothing here depends on the shipped findings' content (tests/unit/test_published.py
reads those)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from findings_run import PEAK_MB
from findings_run import with_curves as with_findings_curves
from support import MADE_UP_SIZE, REPO, reseal

from vhct.article.__main__ import main as article_main
from vhct.article.build import build, compile_pdf
from vhct.article.figures import Placed
from vhct.article.record import collect
from vhct.article.redraw import main as redraw_main
from vhct.article.sources import read_sources
from vhct.article.typeset import environment, escape, render
from vhct.durations import duration
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.reporting.costs import full_scale
from vhct.reporting.history import render as history_render
from vhct.reporting.plots import figure_job
from vhct.reporting.published import FindingsError
from vhct.reporting.render import format_number
from vhct.reporting.view import ratio_words

REMARKS = REPO / "src" / "vhct" / "article" / "templates" / "remarks.typ.j2"
#: any image will do where a test compiles a rendered source without drawing the figures
STAND_IN_IMAGE = REPO / "docs" / "figures" / "audit_forest.png"

needs_pdftotext = pytest.mark.skipif(
    shutil.which("pdftotext") is None,
    reason="pdftotext (poppler-utils) is not installed: no PDF text to read",
)


def findings_of(root: Path) -> Path:
    return root / "docs" / "findings"


def with_curves(root: Path, figures=None) -> None:
    """``root``'s findings with the curves of ``figures`` (default every regret figure)."""
    with_findings_curves(findings_of(root), root, figures)


def pdf_text(pdf: Path) -> str:
    """The PDF's text on one line: a line broken after a hyphen joined, every run of spaces one."""
    out = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(re.sub(r"-\n", "-", out).split())


def audit_data(root: Path) -> dict:
    return json.loads((findings_of(root) / "audit.json").read_text(encoding="utf-8"))


def write_audit(root: Path, data: dict) -> None:
    """Write the findings' audit and record it as the run's (:func:`support.reseal`)."""
    (findings_of(root) / "audit.json").write_text(json.dumps(data), encoding="utf-8")
    reseal(findings_of(root))


def article_of(root: Path):
    return collect(read_sources(findings_of(root), root), "shipped findings")


def source_of(root: Path) -> str:
    """The Typst source the article renders from ``root``'s findings (no figures drawn)."""
    article = article_of(root)
    stand_in = Placed(Path("forest.png"), 1.0)
    return render(article, [stand_in], {f.name: stand_in if f.present else None for f in article.figures})


def verdict_text(verdict: str, category: str) -> str:
    return verdict + (f" ({category})" if category and category != verdict else "")


@pytest.fixture
def root(made_up_root, tmp_path) -> Path:
    """A copy of the made-up checkout (conftest's ``made_up_root``) of the test's own."""
    return Path(shutil.copytree(made_up_root, tmp_path / "checkout"))


@pytest.fixture(scope="module")
def built(curved_root):
    """The article built by its command line (its defaults: run in the checkout) from the made-up
    findings with every curve (conftest's ``curved_root``; no results/), and its PDF."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(curved_root)
        assert article_main([]) == 0
    assert not (curved_root / "results").exists()
    return curved_root, curved_root / "docs" / "article.pdf"


def test_builds_from_the_findings_alone(built):
    root, pdf = built
    assert pdf.read_bytes().startswith(b"%PDF")


@needs_pdftotext
def test_pdf_holds_every_verdict_and_estimate_of_the_audit(built):
    root, pdf = built
    text = pdf_text(pdf)
    audit = read_sources(findings_of(root), root).audit  # the one reader's records
    assert text.count("Verdict: ") == len(audit.claims)
    blocks = text.split("Verdict: ")[1:]  # one per reading, by statement, in the audit's order
    statements = list(dict.fromkeys(c.claim.reading_of or c.claim.id for c in audit.claims))
    ordered = sorted(audit.claims, key=lambda c: statements.index(c.claim.reading_of or c.claim.id))
    compared = 0
    for claim, block in zip(ordered, blocks, strict=True):
        cid = claim.claim.id
        said = verdict_text(claim.verdict, claim.category)
        assert cid.replace("-", "") in text.replace("-\n", "").replace("-", ""), cid  # its section names it
        assert block.startswith(said), (cid, block[:80])
        for exp in claim.experiments:
            for c in exp.comparisons:
                compared += 1
                # an effect in units of a threshold of seconds is printed as a duration
                per = re.search(r" / ([0-9.e+]+) s$", c.effect_name or "")
                shown = (lambda v: duration(v * float(per[1]))) if per else format_number  # noqa: B023
                if math.isfinite(c.effect):
                    assert shown(c.effect) in block, (cid, c.label, c.effect)
                if c.ci_low is not None:
                    assert f"{shown(c.ci_low)} to {shown(c.ci_high)}" in block, cid
                assert c.verdict in block
    assert compared  # the made-up audit holds comparisons


@needs_pdftotext
def test_pdf_states_data_sets_costs_design_and_the_pending_sections(built):
    root, pdf = built
    text = pdf_text(pdf)
    sources = read_sources(findings_of(root), root)
    article = collect(sources, "shipped findings")
    assert article.data_sets and all(d.sha256 in text for d in article.data_sets)
    assert f"commit {sources.provenance.commit}" in text
    assert f"peaked at {format_number(PEAK_MB)} MB resident" in text  # the recorder's peak
    assert "[Re] Optimum-statistical Collaboration" in text  # CITATION.cff's title
    # every curve is in the input; docs/upstream/ does not exist in the checkout
    assert "not in the input" not in text and "Pending: the reports" in text
    assert article.figures and all(f.present for f in article.figures)
    assert text.count("band ±1 standard deviation") == len(article.figures)
    # the design, the statements decided by computation and the implementation choices, from the audit
    design = sources.audit.context.design
    assert design is not None and "The audit is confirmatory" in text and design.seed_span in text
    assert sources.audit.computed and sources.audit.sensitivity
    unhyphenated = text.replace("-", "")  # pdftotext drops the hyphen of an id broken at a line's end
    for c in sources.audit.computed:  # the computed statements' table: id and verdict
        assert c.claim.id.replace("-", "") in unhyphenated and c.verdict in text, c.claim.id
    for choice in sources.audit.sensitivity:
        assert choice.choice.id in text, choice.choice.id


def test_a_changed_finding_changes_its_sentence(root):
    """The deciding comparison is said in words, the view's sentence (size, interval and way: "23.4 %
    [11.1, 35.7] above"), with its interval's level and seeds: made-up estimates on either side of 1
    change it accordingly."""
    data = audit_data(root)
    claim = next(c for c in data["claims"] if any(e["comparisons"] for e in c["experiments"]))
    comps = [c for e in claim["experiments"] for c in e["comparisons"]]
    decider = max(comps, key=lambda c: c["p_claimed"])  # the weakest reproduced one: largest claimed p

    def deciding(source: str) -> str:
        return source.split("The deciding comparison", 1)[1].split("\n", 1)[0]

    before = deciding(source_of(root))
    assert f"{decider['n_a']} seeds per arm): " in before
    seen = {}
    for way, (effect, low, high) in {"above": (1.234, 1.111, 1.357), "below": (0.789, 0.654, 0.876)}.items():
        decider.update(effect=effect, ci_low=low, ci_high=high, ci_level=0.9)
        write_audit(root, data)
        seen[way] = deciding(source_of(root))
        size, interval, said_way = ratio_words(effect, low, high)
        said = escape(f"is {size} {interval} {way}")
        assert said_way == way and said in seen[way], seen[way]
        assert seen[way].startswith(f" (90 % interval, {decider['n_a']} seeds per arm): ")
        assert said not in before
    assert "below" not in seen["above"] and "above" not in seen["below"]


def test_a_remark_is_printed_only_while_its_claims_have_their_verdicts(root):
    """``rests_on``, the guard of every remark of the templates, on a made-up audit: true while each
    claim named has one of the verdicts (or ``verdict: category``) given, false once one changes."""
    data = audit_data(root)
    first, second = data["claims"][0], data["claims"][1]
    first.update(verdict="reproduced", category="reproduced")
    second.update(verdict="not reproduced", category="the opposite")
    write_audit(root, data)
    remark = environment().from_string(
        "{% if rests_on([x], 'reproduced') and rests_on([y], ['not reproduced: the opposite']) %}R{% endif %}"
    )
    ids = {"x": first["claim"]["id"], "y": second["claim"]["id"]}
    assert remark.render(a=article_of(root), **ids) == "R"
    second.update(category="no effect of the claimed size")
    write_audit(root, data)
    assert remark.render(a=article_of(root), **ids) == ""
    assert remark.render(a=article_of(root), x="no such claim", y=ids["y"]) == ""


def test_every_claim_a_remark_names_is_in_the_claims_file():
    """A remark naming a claim the claims file lacks would never be printed."""
    from vhct.reporting.audit.claims import load_claims

    named = set()
    for group in re.findall(r"\[([^\]]*)\]", REMARKS.read_text(encoding="utf-8")):
        named |= set(re.findall(r'"([a-z0-9-]+)"', group))
    named -= {"reproduced", "not reproduced", "inconclusive", "mixed"}  # verdicts a remark may rest on
    ids = {c.id for c in load_claims().claims}
    assert named and named <= ids, named - ids


@needs_pdftotext
def test_typst_markup_in_a_value_stays_text(root, tmp_path):
    data = audit_data(root)
    quote = f"#set page(width: 1cm) $x$ *not bold* [a] // <b> @c ~ \\ - = + {MADE_UP_SIZE}"  # its size too
    data["claims"][0]["claim"]["quote"] = quote
    write_audit(root, data)
    folder = tmp_path / "build"
    folder.mkdir()
    shutil.copy(STAND_IN_IMAGE, folder / "forest.png")
    pdf = tmp_path / "a.pdf"
    pdf.write_bytes(compile_pdf(source_of(root), folder, 0))
    assert quote in pdf_text(pdf)


def test_a_bad_input_is_one_line_and_writes_nothing(root, capsys):
    (findings_of(root) / "audit.json").unlink()
    out = root / "docs" / "article.pdf"
    assert (
        article_main(["--findings", str(findings_of(root)), "--out", str(out), "--checkout", str(root)]) == 2
    )
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "audit.json" in err
    assert not out.exists()
    with pytest.raises(FindingsError, match="no such folder"):
        read_sources(root / "nowhere", root)


def test_full_scale_cost_is_measured_seconds_per_round_times_rounds_and_seeds(root):
    sources = read_sources(findings_of(root), root)
    scale = full_scale(root / "config/paper.yaml", sources.timings, sources.audit.context.experiments)
    measured = [r for r in scale.rows if r.seconds is not None]
    assert measured  # the made-up timings are of settings the paper's config runs
    for row in measured:
        timing = sources.timings[row.experiment]
        runs = timing[timing["setting"] == row.setting]
        per_round = runs["step_seconds_sum"].sum() / runs["rounds"].sum()
        assert row.seconds == pytest.approx(per_round * row.rounds * row.seeds)
        assert row.measured_rounds == runs["rounds"].max()
        assert row.extrapolated == (row.rounds > row.measured_rounds)
    assert all(
        r.experiment not in sources.timings or r.setting in set(sources.timings[r.experiment]["setting"])
        for r in measured
    )
    assert scale.total_seconds == pytest.approx(sum(r.seconds for r in measured))


def test_full_scale_costs_a_setting_not_timed_at_its_stand_in(root):
    """A setting the timings lack (the quick start runs no sensitivity variant) is costed at its
    stand-in's seconds per round (a variant at its default's) and named; without one it is unmeasured."""
    sources = read_sources(findings_of(root), root)
    paper, experiments = root / "config/paper.yaml", sources.audit.context.experiments
    alone = full_scale(paper, sources.timings, experiments)
    timed = [r for r in alone.rows if r.seconds is not None]
    untimed = next(
        r for r in alone.rows if r.seconds is None and r.experiment in {t.experiment for t in timed}
    )
    default = next(r for r in timed if r.experiment == untimed.experiment)
    scale = full_scale(paper, sources.timings, experiments, {untimed.setting: default.setting})
    row = next(r for r in scale.rows if (r.experiment, r.setting) == (untimed.experiment, untimed.setting))
    assert row.stand_in == default.setting and row.seconds_per_round == default.seconds_per_round
    assert row.seconds == pytest.approx(default.seconds_per_round * row.rounds * row.seeds)
    name = f"{untimed.setting} on {untimed.experiment}"
    assert name in alone.unmeasured and not alone.stood_in
    assert name not in scale.unmeasured and f"{name} at {default.setting}'s" in scale.stood_in


def test_a_regret_figure_is_drawn_when_the_input_holds_its_curves(root, tmp_path):
    """Curves written by the pipeline's own curve and timing writers for one figure's settings: the
    article draws that figure and no longer lists it as absent; the others stay listed."""
    figures = collect(read_sources(findings_of(root), root), "results").figures
    assert len(figures) > 1 and not any(f.present for f in figures)
    first, *others = figures
    with_curves(root, [first])
    out, source = tmp_path / "article.pdf", tmp_path / "article.typ"
    build(findings_of(root), out, "results", root, source, progress=lambda message: None)
    present = {f.name: f.present for f in collect(read_sources(findings_of(root), root), "results").figures}
    assert present == {first.name: True, **{f.name: False for f in others}}
    text = source.read_text(encoding="utf-8")
    assert f'image("{first.name}.png"' in text
    absent = text.split("The per-round curves of", 1)[1].split("are not in the input", 1)[0]
    assert escape(first.name) not in absent and all(escape(f.name) in absent for f in others)


def test_every_figure_of_the_run_is_redrawn_from_the_results_cache_as_from_the_results(curved_root, tmp_path):
    """Issue 38 item 4: with each setting's curve and timing aggregates in the findings (as ``make
    findings`` ships them), ``python -m vhct.article.redraw`` draws every figure the run made (the
    audit's forest and summary among them), and a regret figure drawn from the shipped copy has the
    bytes of the one drawn from the run's results."""
    findings_dir = findings_of(curved_root)
    sources = read_sources(findings_dir, curved_root)
    out = tmp_path / "redrawn"
    assert (
        redraw_main(["--findings", str(findings_dir), "--out", str(out), "--checkout", str(curved_root)]) == 0
    )
    assert sorted(p.stem for p in out.glob("*.png")) == sorted(sources.provenance.figures)
    assert set(AUDIT_FIGURES) <= set(sources.provenance.figures)
    figure = collect(sources, "shipped findings").figures[0]
    results = tmp_path / "results"  # the same tables where the run writes them
    for by_setting in figure.curves.values():
        for path in by_setting.values():
            for table in path.parent.iterdir():
                copy = results / table.relative_to(findings_dir)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(table, copy)
    from_results = {
        e: {s: str(results / p.relative_to(findings_dir)) for s, p in by.items()}
        for e, by in figure.curves.items()
    }
    figure_job(figure.spec, from_results, tmp_path / "a.pdf", tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes() == (out / f"{figure.name}.png").read_bytes()


def test_only_the_figures_the_run_recorded_are_redrawn(curved_root, tmp_path):
    """A run that recorded the audit's forest alone (a run older than the summary figure, no regret
    figure): ``redraw`` draws the forest and nothing else."""
    forest, _ = AUDIT_FIGURES
    root = Path(shutil.copytree(curved_root, tmp_path / "checkout"))
    prov_path = findings_of(root) / "provenance.json"
    prov = json.loads(prov_path.read_text(encoding="utf-8"))
    prov_path.write_text(json.dumps({**prov, "figures": [forest]}), encoding="utf-8")
    out = tmp_path / "redrawn"
    assert (
        redraw_main(["--findings", str(findings_of(root)), "--out", str(out), "--checkout", str(root)]) == 0
    )
    assert sorted(p.name for p in out.iterdir()) == [f"{forest}.pdf", f"{forest}.png"]


def test_redrawing_without_the_curves_is_refused_naming_the_figures(made_up_root, tmp_path, capsys):
    figures = collect(read_sources(findings_of(made_up_root), made_up_root), "results").figures
    out = tmp_path / "redrawn"
    args = ["--findings", str(findings_of(made_up_root)), "--out", str(out), "--checkout", str(made_up_root)]
    assert redraw_main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not in the input" in err
    assert figures and all(f"{f.name} (" in err for f in figures)
    assert not out.exists()


def test_the_authors_section_lists_each_upstream_report_by_its_title_and_not_the_index(root):
    shutil.copytree(REPO / "docs/upstream", root / "docs/upstream")
    text = source_of(root)
    section = text.split("= Communication with the original authors", 1)[1].split("\n= ", 1)[0]
    reports = sorted(p for p in (REPO / "docs/upstream").glob("*.md") if p.name != "README.md")
    assert reports and section.count('#raw("docs/upstream/') == len(reports)
    for report in reports:
        title = report.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
        assert f'#raw("docs/upstream/{report.name}")' in section and title.split(":")[0] in section
    assert "README.md" not in section and "no contact with the original authors" in section


def test_memory_is_the_provenance_records_peak_or_said_not_recorded(root):
    """The computational requirements give the recorder's peak memory when the record has one, and
    say it was not recorded when it has none."""
    path = findings_of(root) / "provenance.json"
    prov = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**prov, "max_rss_mb": PEAK_MB}), encoding="utf-8")
    assert f"peaked at {format_number(PEAK_MB)} MB resident" in source_of(root)
    path.write_text(json.dumps({**prov, "max_rss_mb": None}), encoding="utf-8")
    text = source_of(root)
    assert "Memory: not recorded" in text and "peaked at" not in text


def test_the_design_history_is_one_sentence_where_the_checkout_has_no_git_record(root):
    """Built in a folder that is no git repository, the article's design history says so in one
    sentence (and has no appendix); built in this repository, it tells the history of the shipped
    run, the record docs/findings.md's section is rendered from."""
    source = source_of(root)
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
    article = collect(read_sources(REPO / "docs" / "findings", REPO), "shipped findings")
    findings_md = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    h = article.history
    assert h is not None and h.run.commit == article.meta.commit
    assert history_render(h) in findings_md
