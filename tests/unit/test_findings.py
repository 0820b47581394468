"""The findings document (vhct.reporting.findings): rendered from a shipped run, and the shipped one."""

from __future__ import annotations

import json
import re
import subprocess

import pandas as pd
import pytest
import yaml
from findings_run import complete as _complete
from findings_run import made_up_run as _made_up_run
from support import REPO, made_up_provenance, reseal

from vhct.reporting import findings, ship
from vhct.reporting.audit.records import AUDIT_FORMAT, parse_audit, read_audit
from vhct.reporting.render import headline


def test_a_shipped_run_renders_every_part(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    copied = ship.ship(results, figures, docs)
    assert all(p.is_file() for p in copied)
    # the audit's verdict table is shipped beside its JSON, as the run wrote it
    shipped_table = docs / findings.DATA_DIR / findings.VERDICTS_CSV
    assert shipped_table in copied
    assert shipped_table.read_bytes() == (results / findings.VERDICTS_CSV).read_bytes()
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    # the audit's forest figure is shipped and linked first, before the summary
    assert (docs / "figures" / "audit_forest.png").is_file()
    assert text.index("[audit_forest](figures/audit_forest.png)") < text.index("## Summary")
    # and its one-page summary and verdict table, before the summary too
    assert (docs / "figures" / "audit_summary.png").is_file()
    assert text.index("[audit_summary](figures/audit_summary.png)") < text.index("## Summary")
    assert text.index("[verdicts.csv](findings/verdicts.csv)") < text.index("## Summary")
    assert headline(read_audit(results / findings.AUDIT_JSON)) in text
    for needle in (
        "| - reading 1: C1 |",
        "| C2 |",
        "C1 flips: reproduced -> inconclusive",
        "| D1 |",
        "BO stops at t = 50",
        "mnist runs in test-split mode",
        "1 h 02 min 05 s",
        "config/paper-local.yaml",
        "12.5 ± 1.5",
        "#### C1\n\n**reproduced** on garland, mnist. Sec. 5. read as the lowest final regret",
        "- mnist: reproduced (vs BO: p = 0.02)",
        "#### C2\n\n**inconclusive** on garland. Fig. 3. VHCT and HCT alike",
        # the table by statement: S's verdict, its two readings under it
        "| S | **readings disagree** | 2 readings, which disagree (a flip) |  |  |\n"
        "| - reading 1: C1 | reproduced | VHCT below BO | osc-refresh (inconclusive) "
        "| [why](#c1) |\n"
        "| - reading 2: C3 | not reproduced | mnist: BO vs VHCT-rho0.75 at t = 50 of 100",
        # the opening summary, from the audit JSON: 2 statements, 3 readings
        "- **Scope.** 2 statements of the paper (3 readings",
        "2 experiments (garland, mnist) at 20 seeds",
        "- **Reproduced:** none.",
        "- **Not reproduced:** none.",
        # each reading's line leads with its headline from the view (its effect; vhct.reporting.view)
        "- **Readings disagree** (1 statement):\n  - S (Sec. 5), 2 readings:\n"
        "    - [C1](#c1): **reproduced**; ",
        "    - [C3](#c3): **not reproduced**; ",
        "- **Inconclusive** (1 statement), neither the claim nor its refutation significant: C2.",
        "- **Read before the horizon** (1 comparison, each labelled with its round",
    ):
        assert needle in text, needle
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
    cells = ["mnist", "VHCT-rho0.75", "1..50 of 100", "0.35", "0.05", "7", "not reproduced", "2.5", "2.25"]
    assert "| rounds | " + " | ".join(heads) + " |" in text
    assert "| " + " | ".join(cells) + " |" in text
    assert "the optimizer's own mean wall seconds per round (its ask and tell, without" in text
    # BO stopped at t = 50 follows the full-horizon setting although its R_n is smaller
    vhct_row = text.index("| VHCT-rho0.75 | 5000 | 20 | 12.5 ± 1.5 | 0.0025 |")
    assert vhct_row < text.index("| BO | 50 | 20 | 3.25 ± 2 |")
    # the design history is read from git where the documents are rendered: outside a repository the
    # section says so in one sentence, before the figures
    unavailable = (
        "## Design history\n\nThe design history (what had been seen before the analysis plan of these "
        "findings, read from the repository's git record) is not told here: the document was rendered "
        "outside the top folder of a git repository.\n\n## Figures"
    )
    assert unavailable in text
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert "figures/fig3a_garland.png" in links
    for link in links:
        if link.startswith(("figures/", "findings/")):
            assert (docs / link).is_file(), link
    # the document is a function of the shipped files: a verdict changed in the audit JSON changes it
    shipped = json.loads((docs / findings.DATA_DIR / findings.AUDIT_JSON).read_text())
    shipped["claims"][1].update(verdict="reproduced", category="reproduced")
    (docs / findings.DATA_DIR / findings.AUDIT_JSON).write_text(json.dumps(shipped))
    reseal(docs / findings.DATA_DIR)
    changed = findings.render(docs)
    assert "| C2 | **reproduced** |" in changed and "| C2 | **inconclusive** |" in text
    assert "- **Reproduced** (1 statement):\n  - [C2](#c2)" in changed and "- **Inconclusive**" not in changed


def test_an_audit_of_another_format_is_refused_by_name(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    ship.ship(results, figures, docs)
    path = docs / findings.DATA_DIR / findings.AUDIT_JSON
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

    assert headline(made_up({"a": {"seeds": list(range(20))}})) == (
        "At 20 seeds per curve, of the paper's 4 audited statements: 2 reproduced, 1 not reproduced and "
        "1 inconclusive; 1 statement flips under an implementation choice the paper leaves open."
    )
    # a setting that ran fewer seeds than its experiment lists is named, with its count and where
    few = {"BO-restarts5": {"seeds": list(range(4))}, "VHCT": {}}
    experiments = {
        "garland": {"seeds": list(range(20)), "settings": few},
        "landmine": {
            "seeds": list(range(20)),
            "settings": {"Random": {"seeds": list(range(10))}, "VHCT": {}},
        },
    }
    assert headline(made_up(experiments)).startswith(
        "At 20 seeds per curve (BO-restarts5: 4 on garland; Random: 10 on landmine), of the paper's 4 "
    )


# ---------------------------------------------------------------- the shipped findings
DOCS = REPO / "docs"


def _shipped(name: str) -> dict:
    return json.loads((DOCS / findings.DATA_DIR / name).read_text(encoding="utf-8"))


def test_shipped_findings_document_is_what_the_generator_makes_of_the_shipped_files():
    assert _shipped(findings.AUDIT_JSON)["format"] == AUDIT_FORMAT  # shipped in the current format
    shipped, rendered = (DOCS / findings.DOCUMENT).read_text(encoding="utf-8"), findings.render(DOCS)
    if "## Design history\n\nThe design history (" in rendered:  # no full git history here (a shallow
        # clone, an export): the section says so; the rest is still what the shipped files give
        shipped, rendered = (
            re.sub(r"## Design history\n.*?(?=\n## )", "", t, flags=re.S) for t in (shipped, rendered)
        )
    assert shipped == rendered


def test_every_file_the_shipped_findings_link_exists_and_every_figure_is_shown():
    text = (DOCS / findings.DOCUMENT).read_text(encoding="utf-8")
    links = [link for link in re.findall(r"\]\(([^)#\s]+)\)", text) if "://" not in link]
    assert links
    for link in links:
        assert (DOCS / link).exists(), link
    pngs = sorted((DOCS / findings.FIGURES_DIR).glob("*.png"))
    assert pngs, "no figure shipped"
    for png in pngs:
        assert f"{findings.FIGURES_DIR}/{png.name}" in links, png.name
        assert png.read_bytes().startswith(b"\x89PNG"), png.name


def test_shipped_findings_are_at_paper_scale_from_committed_code():
    audit = read_audit(DOCS / findings.DATA_DIR / findings.AUDIT_JSON)  # the one reader: format 5
    prov = _shipped(findings.PROVENANCE_JSON)
    for name, experiment in audit.context.experiments.items():  # the paper's 20 seeds, or more
        assert len(experiment.seeds) >= 20, name
        assert all(len(s.seeds) >= 20 for s in experiment.settings.values()), name  # every setting
    assert audit.paper_seeds == 20 and audit.below_paper() == {}
    assert prov["config_files"] == ["config/config.yaml", "config/paper.yaml", "config/paper-local.yaml"]
    assert re.fullmatch(r"[0-9a-f]{40}", prov["commit"]) and not prov["uncommitted_changes"]
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text(encoding="utf-8"))["claims"]
    text = (DOCS / findings.DOCUMENT).read_text(encoding="utf-8")
    assert [c.claim.id for c in audit.claims] == [c["id"] for c in claims]
    for c in audit.claims:  # a row of the summary table: a statement's, or a reading's under it
        assert re.search(rf"^\| (- reading \d+: )?{re.escape(c.claim.id)} \|", text, re.M), c.claim.id
    if (REPO / ".git").exists():  # a checkout with history: the commit is one of main's
        ancestry = ["git", "-C", str(REPO), "merge-base", "--is-ancestor", prov["commit"], "HEAD"]
        assert subprocess.run(ancestry, check=False).returncode == 0, f"{prov['commit']} not in history"


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


def test_the_headline_and_the_summary_agree_with_the_verdict_table():
    """The README's headline, the findings' summary and the table at a glance, from one renderer (the
    shipped findings)."""
    docs = DOCS
    audit = findings.read_audit(docs / findings.DATA_DIR / findings.AUDIT_JSON)
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
    audit_path = docs / findings.DATA_DIR / findings.AUDIT_JSON
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
