"""The findings document (vhct.reporting.findings), rendered from a made-up run shipped (the shipped
findings themselves: tests/unit/test_published.py)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from findings_run import complete as _complete
from findings_run import made_up_run as _made_up_run
from support import headline_counts, made_up_provenance, reseal

from vhct.durations import duration
from vhct.pipeline.layout import AUDIT_JSON, PROVENANCE_JSON, VERDICTS_CSV
from vhct.pipeline.provenance import read_provenance
from vhct.reporting import findings, ship
from vhct.reporting.audit.records import AUDIT_FORMAT, parse_audit, read_audit
from vhct.reporting.render import format_number, headline


def test_a_shipped_run_renders_every_part(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    copied = ship.ship(results, figures, docs)
    assert all(p.is_file() for p in copied)
    # the audit's verdict table is shipped beside its JSON, as the run wrote it
    shipped_table = docs / findings.DATA_DIR / VERDICTS_CSV
    assert shipped_table in copied
    assert shipped_table.read_bytes() == (results / VERDICTS_CSV).read_bytes()
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    # the audit's forest figure is shipped and linked first, before the summary
    assert (docs / "figures" / "audit_forest.png").is_file()
    assert text.index("[audit_forest](figures/audit_forest.png)") < text.index("## Summary")
    # and its one-page summary and verdict table, before the summary too
    assert (docs / "figures" / "audit_summary.png").is_file()
    assert text.index("[audit_summary](figures/audit_summary.png)") < text.index("## Summary")
    assert text.index("[verdicts.csv](findings/verdicts.csv)") < text.index("## Summary")
    audit = read_audit(docs / findings.DATA_DIR / AUDIT_JSON)
    prov = read_provenance(docs / findings.DATA_DIR / PROVENANCE_JSON)
    assert headline(audit) in text
    # every value below is the shipped record's, as the template renders it; no sentence is pinned
    assert duration(prov.wall_seconds, finest="s") in text and prov.config_files[-1] in text
    for name, exp in audit.context.experiments.items():
        mode = exp.objective_params.get("mode")
        assert mode is None or f"{name} runs in {mode} mode" in text
        for setting, info in exp.settings.items():  # a capped setting: where it stops
            assert (f"{setting} stops at t = {info.horizon}" in text) == (info.horizon < exp.horizon)
    for d in audit.discrepancies:
        assert f"| {d.id} |" in text
    for choice in audit.sensitivity:
        for row in choice.claims:
            assert (f"{row.claim} flips: {row.default_verdict} -> {row.variant_verdict}" in text) == row.flips
    # each claim's section: its verdict, coverage, location and note (else quote), and each experiment's
    # verdict with its reason on one line
    for claim in audit.claims:
        section = text.split(f"\n#### {claim.claim.id}\n", 1)[1].split("\n#", 1)[0]
        assert f"**{claim.verdict}**" in section and claim.coverage in section, claim.claim.id
        assert claim.claim.location in section and (claim.claim.note or claim.claim.quote) in section
        for e in claim.experiments:
            assert any(
                e.experiment in line and e.verdict in line and e.reason in line
                for line in section.split("\n")
            ), (claim.claim.id, e.experiment)
    # the table by statement: each reading's row under its statement, with its verdict and its link
    rows = {cells[0]: cells for cells in (table_cells(line) for line in text.split("\n")) if cells}
    for k, claim in enumerate((c for c in audit.claims if c.claim.reading_of), start=1):
        cells = rows[f"- reading {k}: {claim.claim.id}"]
        assert cells[1] == claim.verdict and cells[2] and cells[-1] == f"[why](#{claim.claim.id.lower()})"
    # the opening summary, from the audit: its counts, each verdict's statements
    scope = next(line for line in text.split("\n") if line.startswith("- **Scope.**"))
    statements = {c.claim.reading_of or c.claim.id for c in audit.claims}
    assert f" {len(statements)} statements" in scope and f"({len(audit.claims)} readings" in scope
    assert all(name in scope for name in audit.context.experiments)
    summary = text[text.index("## Summary") : text.index("## Provenance")]
    for verdict, title in (("reproduced", "Reproduced"), ("not reproduced", "Not reproduced")):
        if not any(c.verdict == verdict and not c.claim.reading_of for c in audit.claims):
            assert f"- **{title}:** none." in summary
    (inconclusive,) = [line for line in summary.split("\n") if line.startswith("- **Inconclusive**")]
    assert all(c.claim.id in inconclusive for c in audit.claims if c.verdict == "inconclusive")
    for claim in audit.claims:  # the readings that disagree, each linked with its verdict
        if claim.claim.reading_of:
            assert f"[{claim.claim.id}](#{claim.claim.id.lower()}): **{claim.verdict}**;" in summary
    early = [c for claim in audit.claims for e in claim.experiments for c in e.comparisons if c.early]
    assert f"- **Read before the horizon** ({len(early)} comparison" in summary
    # the cost table: the very comparison the cost claim tested (the optimizer's own seconds), the
    # total seconds beside it, each column saying which it is
    heads = [
        "BO optimizer s/round (ask + tell)",
        "setting optimizer s/round (ask + tell)",
        "ratio (optimizer)",
        "verdict",
        "BO total s/round (with the objective)",
        "setting total s/round (with the objective)",
    ]
    assert "| rounds | " + " | ".join(heads) + " |" in text
    (cost,) = [
        c
        for claim in audit.claims
        if claim.claim.statistic.startswith("optimizer_seconds")
        for e in claim.experiments
        for c in e.comparisons
    ]
    numbers = [format_number(v) for v in (cost.mean_a, cost.mean_b, cost.effect)]
    totals = [format_number(v) for v in (cost.total_a, cost.total_b)]
    reads = f"1..{cost.round} of {cost.horizon}"
    assert table_cells(next(line for line in text.split("\n") if reads in line)) == [
        cost.experiment,
        cost.b,
        reads,
        *numbers,
        cost.verdict,
        *totals,
    ]
    # the final regret table, from the final aggregates, in the order of the regret per round: BO
    # stopped at t = 50 follows the full-horizon setting on garland although its R_n is smaller
    for name in audit.context.experiments:
        final = final_of(docs, name)
        at = {}
        for row in final.itertuples():
            mean = f"{format_number(row.final_mean)} ± {format_number(row.final_std)}"
            per_round = format_number(row.final_mean / row.horizon)
            line = f"| {row.setting} | {row.horizon} | {row.n_seeds} | {mean} | {per_round} |"
            at[row.setting] = text.index(line)
        by_rate = final.assign(rate=final["final_mean"] / final["horizon"]).sort_values("rate")["setting"]
        assert sorted(at, key=at.get) == list(by_rate), name
    smaller = final_of(docs, "garland").set_index("setting")["final_mean"]
    assert smaller["BO"] < smaller["VHCT-rho0.75"]  # the made-up run's case the order is about
    # the design history is read from git where the documents are rendered: outside a repository the
    # section says so in one sentence, before the figures
    history = text[text.index("## Design history") : text.index("## Figures")]
    assert "is not told here: the document was rendered outside the top folder of a git repository" in history
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert "figures/fig3a_garland.png" in links
    for link in links:
        if link.startswith(("figures/", "findings/")):
            assert (docs / link).is_file(), link
    # the document is a function of the shipped files: a verdict changed in the audit JSON changes it
    shipped = json.loads((docs / findings.DATA_DIR / AUDIT_JSON).read_text())
    shipped["claims"][1].update(verdict="reproduced", category="reproduced")
    (docs / findings.DATA_DIR / AUDIT_JSON).write_text(json.dumps(shipped))
    reseal(docs / findings.DATA_DIR)
    changed = findings.render(docs)
    assert "| C2 | **reproduced** |" in changed and "| C2 | **inconclusive** |" in text
    assert "- **Reproduced** (1 statement):\n  - [C2](#c2)" in changed and "- **Inconclusive**" not in changed


def final_of(docs, experiment: str) -> pd.DataFrame:
    return pd.read_csv(docs / findings.DATA_DIR / "aggregates" / experiment / "final.csv")


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row (none for another line)."""
    if not line.startswith("| "):
        return []
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_an_audit_of_another_format_is_refused_by_name(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    path = docs / findings.DATA_DIR / AUDIT_JSON
    old = json.loads(path.read_text())
    del old["format"]  # as the audits written before the format was recorded
    path.write_text(json.dumps(old))
    reseal(docs / findings.DATA_DIR)
    refused = rf"audit.json: audit format 1.*needs format {AUDIT_FORMAT}.*re-run"
    with pytest.raises(findings.FindingsError, match=refused):
        findings.render(docs)


def test_headline_counts_the_verdicts_and_flips():
    def made_up(experiments: dict):
        """An audit of four claims (the paper's 20 seeds) on ``experiments``, read by the one reader."""
        return parse_audit(
            _complete(
                {
                    "format": AUDIT_FORMAT,
                    "sensitivity": [],
                    "discrepancies": [],
                    "reading_flips": [],
                    "claims": [
                        {
                            "id": f"C{i}",
                            "quote": "q",
                            "location": "l",
                            "verdict": v,
                            "reason": "r",
                            "coverage": "a",
                            "min_seeds": 20,
                        }
                        for i, v in enumerate(("reproduced", "reproduced", "not reproduced", "inconclusive"))
                    ],
                    "context": {"experiments": experiments},
                    "flipped_claims": ["C3"],
                }
            )
        )

    said = headline(made_up({"a": {"seeds": list(range(20))}}))
    # the made-up audit's counts, each beside its word: 20 seeds, 4 statements, the verdicts' tally, 1 flip
    assert headline_counts(said) == {
        "seeds": 20,
        "audited": 4,
        "reproduced": 2,
        "not reproduced": 1,
        "inconclusive": 1,
        "statement flips": 1,
    }, said
    # a setting that ran fewer seeds than its experiment lists is named, with its count and where
    few = {"BO-restarts5": {"seeds": list(range(4))}, "VHCT": {}}
    experiments = {
        "garland": {"seeds": list(range(20)), "settings": few},
        "landmine": {
            "seeds": list(range(20)),
            "settings": {"Random": {"seeds": list(range(10))}, "VHCT": {}},
        },
    }
    said = headline(made_up(experiments))
    assert "(BO-restarts5: 4 on garland; Random: 10 on landmine)" in said


def _scale_section(experiments: dict) -> list[str]:
    """The findings' "Not at the paper's full scale" lines of an audit of these experiments."""
    from vhct.reporting.render import render_findings

    audit = parse_audit(
        _complete(
            {
                "format": AUDIT_FORMAT,
                "claims": [],
                "sensitivity": [],
                "discrepancies": [],
                "reading_flips": [],
                "flipped_claims": [],
                "context": {"experiments": experiments},
            }
        )
    )
    prov = made_up_provenance(versions={"numpy": "2.0"}, max_rss_mb=512.0)
    text = render_findings(audit, prov, {}, [], "figures")
    assert "| package versions | numpy 2.0 |" in text  # the provenance's versions, when recorded
    assert "| peak memory | 512 MB resident, the run's largest process" in text  # and its peak memory
    section = text[text.index("## Not at the paper's full scale") : text.index("## Verdicts")]
    return [line for line in section.split("\n")[1:] if line]


def test_a_capped_settings_reason_is_chosen_from_its_parameters():
    """GPyOpt's cost explains a BO setting's cap, with its own GP-fit restarts; another capped setting
    gets its config key as the reason."""
    settings = {
        "BO": {"algorithm": "BO", "params": {"optimize_restarts": 1}, "max_horizon": 50},
        "BO-restarts5": {"algorithm": "BO", "params": {"optimize_restarts": 5}, "max_horizon": 20},
        "T-HOO-short": {"algorithm": "T-HOO", "max_horizon": 20},
        "VHCT": {"algorithm": "VHCT"},
    }
    lines = _scale_section(
        {"garland": {"objective": "garland", "horizon": 100, "seeds": [0, 1], "settings": settings}}
    )
    bo = next(line for line in lines if line.startswith("- **BO stops at t = 50"))
    five = next(line for line in lines if line.startswith("- **BO-restarts5 stops at t = 20"))
    short = next(line for line in lines if line.startswith("- **T-HOO-short stops at t = 20"))
    assert "GPyOpt" in bo and "one warm-started GP fit per round" in bo
    assert "GPyOpt" in five and "with 5 restarts of the GP hyperparameter fit per round" in five
    assert "one warm-started GP fit per round" not in five
    assert "GPyOpt" not in short and "`max_horizon`" in short
    assert not any("VHCT" in line for line in lines)


def test_a_setting_that_runs_fewer_seeds_is_said_with_its_count():
    """BO at 10 of 20 seeds (max_seeds) is stated among what was not run at full scale."""
    settings = {"BO": {"algorithm": "BO", "max_seeds": 10}, "VHCT": {"algorithm": "VHCT"}}
    landmine = {"objective": "landmine", "horizon": 50, "seeds": list(range(20)), "settings": settings}
    lines = _scale_section({"landmine": landmine})
    said = "- **BO runs 10 seeds**, not all, in landmine. Its `max_seeds`"
    assert any(line.startswith(said) for line in lines)
    assert not any("VHCT" in line for line in lines)
    settings["BO"]["max_seeds"] = 20  # a cap at the experiment's count takes none away
    nothing = "- Nothing: every experiment ran at the configured paper scale."
    assert _scale_section({"landmine": landmine}) == [nothing]


@pytest.mark.parametrize("agree", [False, True], ids=["readings disagree", "readings agree"])
def test_the_headline_and_the_summary_agree_with_the_verdict_table(tmp_path, agree):
    """The README's headline, the findings' summary and the table at a glance, from one renderer (a
    made-up run shipped): with a statement's two readings disagreeing, and made to agree."""
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    if agree:  # every reading of a statement read in several ways made reproduced
        path = docs / findings.DATA_DIR / AUDIT_JSON
        data = json.loads(path.read_text(encoding="utf-8"))
        for claim in data["claims"]:
            if claim["claim"].get("reading_of"):
                claim.update(verdict="reproduced", category="reproduced")
        path.write_text(json.dumps(data), encoding="utf-8")
        reseal(docs / findings.DATA_DIR)
    audit = findings.read_audit(docs / findings.DATA_DIR / AUDIT_JSON)
    text = findings.render(docs)
    table = text[
        text.index("| statement / its readings | verdict | decided by |") : text.index(
            "### Why, claim by claim"
        )
    ]
    # a statement's line (its verdict in bold), a reading's under it
    rows = {m[0]: m[1] for m in re.findall(r"^\| ([\w-]+) \| \*\*([^*]+)\*\* \|", table, re.M)}
    readings = re.findall(r"^\| - reading \d: ([\w-]+) \|", table, re.M)
    statements = list(dict.fromkeys(c.claim.reading_of or c.claim.id for c in audit.claims))
    assert list(rows) == statements
    several = [
        c.claim.id
        for c in audit.claims
        if c.claim.reading_of and sum(d.claim.reading_of == c.claim.reading_of for d in audit.claims) > 1
    ]
    assert readings == several and several
    counts = {v: list(rows.values()).count(v) for v in set(rows.values())}
    assert ("reproduced" in counts) == agree  # the agreeing readings' statement: linked below
    head = headline(audit)
    assert f"of the paper's {len(statements)} audited statements ({len(audit.claims)} readings)" in head
    for verdict, n in counts.items():
        assert f"{n} {verdict}" in head
    summary = text[text.index("## Summary") : text.index("## Provenance")]
    for verdict, title in (
        ("reproduced", "Reproduced"),
        ("not reproduced", "Not reproduced"),
        ("inconclusive", "Inconclusive"),
        ("readings disagree", "Readings disagree"),
    ):
        n = counts.get(verdict, 0)
        if n:
            assert f"- **{title}** ({n} statement{'s' * (n != 1)})" in summary
    for claim, verdict in rows.items():
        if verdict not in ("reproduced", "not reproduced"):
            continue
        read_as = [c.claim.id for c in audit.claims if c.claim.reading_of == claim]
        if len(read_as) > 1:  # a statement read in several ways that agree: its readings linked under it
            assert f"  - {claim} (" in summary
            assert all(f"    - [{r}](#{r.lower()})" in summary for r in read_as), claim
        else:
            assert f"  - [{claim}](#{claim.lower()})" in summary  # GitHub's heading slug
    assert f"**{head}**" in text and head in ship.readme_block(docs)
    # every reason is linked from its line, and no regret reference is said twice on one line
    for claim in audit.claims:
        name = claim.claim.id
        assert f"[why](#{name.lower()})" in table and f"\n#### {name}\n" in text
    for line in text.split("\n"):
        assert line.count("regret against the best value observed") <= 1 or line.startswith("  - "), line


def test_the_findings_say_once_which_settings_ran_more_seeds_than_the_paper_and_why(tmp_path):
    """Issue 32: where paper-local runs more seeds than the paper's 20 for the audit's power, the
    findings say so once (which settings, how many, why); capped settings are not 'fewer seeds'."""
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs, reduced=True)
    audit_path = docs / findings.DATA_DIR / AUDIT_JSON
    audit = json.loads(audit_path.read_text(encoding="utf-8"))
    name, exp = next(iter(audit["context"]["experiments"].items()))
    first, *others = list(exp["settings"])
    exp["seeds"] = list(range(200))
    exp["settings"][first]["seeds"] = list(range(200))
    for setting in others:
        exp["settings"][setting].update(seeds=list(range(20)), max_seeds=20)
    audit_path.write_text(json.dumps(audit), encoding="utf-8")
    final = docs / findings.DATA_DIR / "aggregates" / name / "final.csv"  # as such a run aggregates
    table = pd.read_csv(final)
    table.loc[table["setting"] == first, "n_seeds"] = 200
    table.to_csv(final, index=False)
    reseal(docs / findings.DATA_DIR)
    text = findings.render(docs)
    assert text.count("**More seeds than the paper's 20**") == 1
    assert f"{name} ({first} 200)." in text and "power" in text
    assert not any(f"**{s} runs 20 seeds**" in text for s in others)
