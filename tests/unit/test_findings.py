"""The findings generator (vhct.reporting.findings) and the run provenance recorder."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support import REPO

from vhct.pipeline import provenance
from vhct.reporting import findings
from vhct.reporting.audit import AUDIT_FORMAT, Comparison


def _made_up_run(tmp_path: Path) -> tuple[Path, Path]:
    """A finished run's results/ and figures/ as `make paper-local` leaves them (small, made up)."""
    results, figures = tmp_path / "results", tmp_path / "figures"
    settings = {"VHCT-rho0.75": {"algorithm": "VHCT"}, "BO": {"algorithm": "BO", "max_horizon": 50}}
    cost = Comparison("mnist", "BO", "VHCT-rho0.75", round=50, horizon=100, n_a=20, n_b=20, mean_a=0.35,
                      mean_b=0.05, effect=7.0, effect_name="ratio of means", p_claimed=0.9, p_refuted=0.001,
                      p_refuted_holm=0.002, verdict="not reproduced",
                      reason="BO vs VHCT-rho0.75 at t = 50 of 100: ratio of means 7; mean_a < 10 mean_b")
    audit = {
        "format": AUDIT_FORMAT,
        "reading_flips": [{"statement": "S", "readings": {"C1": "reproduced", "C3": "not reproduced"},
                           "flips": True}],
        "context": {
            "experiments": {
                "garland": {"objective": "garland", "objective_params": {}, "noise": 0.05, "horizon": 5000,
                            "seeds": list(range(20)), "settings": settings},
                "mnist": {"objective": "mnist", "objective_params": {"mode": "test-split", "n_train": 2000,
                          "n_valid": 1000}, "noise": 0.05, "horizon": 100, "seeds": list(range(20)),
                          "settings": settings},
            }
        },
        "claims": [
            {"id": "C1", "quote": "VHCT is fastest", "note": "read as the lowest final regret",
             "location": "Sec. 5", "verdict": "reproduced", "coverage": "garland, mnist",
             "reason": "VHCT below BO", "sensitivity": [{"choice": "osc-refresh", "verdict": "inconclusive",
                                                         "flips": True}],
             "experiments": [{"experiment": "garland", "verdict": "reproduced", "reason": "vs BO: p = 0.01"},
                             {"experiment": "mnist", "verdict": "reproduced", "reason": "vs BO: p = 0.02"}]},
            {"id": "C2", "quote": "VHCT and HCT alike", "location": "Fig. 3", "verdict": "inconclusive",
             "coverage": "garland", "reason": "p = 0.2", "sensitivity": [], "experiments": []},
            {"id": "C3", "quote": "BO is expensive", "location": "App.", "verdict": "not reproduced",
             "statistic": "seconds_per_round", "target": "BO", "alpha": 0.05,
             "coverage": "mnist", "reason": "mnist: " + cost.reason, "sensitivity": [],
             "experiments": [{"experiment": "mnist", "verdict": "not reproduced", "reason": cost.reason,
                              "comparisons": [cost.to_json()]}]},
        ],
        "flipped_claims": ["C1"],
        "sensitivity": [{"id": "osc-refresh", "choice": "when U is refreshed", "default": "doubling",
                         "variant": "current", "claims": [
                             {"claim": "C1", "default_verdict": "reproduced",
                              "variant_verdict": "inconclusive",
                              "flips": True, "variant_reason": "p = 0.1"}]}],
        "discrepancies": [{"id": "D1", "where": "App.", "paper": "tau", "issue": "typo",
                           "resolution": "fixed"}],
    }  # fmt: skip
    results.mkdir()
    (results / findings.AUDIT_JSON).write_text(json.dumps(audit))
    (results / findings.PROVENANCE_JSON).write_text(
        json.dumps(
            provenance.record(
                ["snakemake", "--configfile", "config/paper-local.yaml"], datetime.now(UTC), 3725.0
            )
        )
    )
    for name in audit["context"]["experiments"]:
        folder = results / "aggregates" / name
        folder.mkdir(parents=True)
        pd.DataFrame(
            {"setting": ["VHCT-rho0.75", "BO"], "horizon": [5000, 50], "n_seeds": [20, 20],
             "final_mean": [12.5, 3.25], "final_std": [1.5, 2.0]}
        ).to_csv(folder / "final.csv", index=False)  # fmt: skip
        pd.DataFrame(
            {"setting": ["VHCT-rho0.75", "BO"], "algorithm": ["VHCT", "BO"], "seed": [0, 0],
             "rounds": [5000, 50], "wall_seconds": [0.5, 25.0]}
        ).to_csv(folder / "timing.csv", index=False)  # fmt: skip
    figures.mkdir()
    for name in ("fig3a_garland", "fig3c_mnist"):
        (figures / f"{name}.png").write_bytes(b"\x89PNG")
    return results, figures


def test_ship_copies_a_run_into_docs_and_renders_every_part(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    copied = findings.ship(results, figures, docs)
    assert all(p.is_file() for p in copied)
    text = findings.write(docs).read_text(encoding="utf-8")
    audit = json.loads((results / findings.AUDIT_JSON).read_text())
    assert findings.headline(audit) in text
    for needle in ("| C1 |", "| C2 |", "C1 flips: reproduced -> inconclusive", "| D1 |", "BO stops at t = 50",
                   "mnist runs in test-split mode", "1 h 02 min 05 s", "config/paper-local.yaml",
                   "12.5 ± 1.5", "**C1** (reproduced): read as the lowest final regret",
                   "  - mnist: reproduced (vs BO: p = 0.02)",
                   "**C2** (inconclusive): VHCT and HCT alike",
                   # the opening summary, from the audit JSON
                   "- **Scope.** 3 claims of the paper", "2 experiments (garland, mnist) at 20 seeds",
                   "- **Reproduced** (1):\n  - C1 (Sec. 5)",
                   "- **Not reproduced** (1):\n  - C3 (App.): mnist: BO vs VHCT-rho0.75 at t = 50 of 100",
                   "- **Inconclusive** (1), neither the claim nor its refutation significant: C2.",
                   "- **Two readings disagree** on S: C1: reproduced, C3: not reproduced.",
                   "- **Read before the horizon** (1 comparison, each labelled with its round",
                   # the cost table: the very comparison the cost claim tested
                   "| mnist | VHCT-rho0.75 | 1..50 of 100 | 0.35 | 0.05 | 7 | not reproduced |"):  # fmt: skip
        assert needle in text, needle
    # BO stopped at t = 50 follows the full-horizon setting although its R_n is smaller
    vhct_row = text.index("| VHCT-rho0.75 | 5000 | 20 | 12.5 ± 1.5 | 0.0025 |")
    assert vhct_row < text.index("| BO | 50 | 20 | 3.25 ± 2 |")
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert "figures/fig3a_garland.png" in links
    for link in links:
        if link.startswith(("figures/", "findings/")):
            assert (docs / link).is_file(), link
    # the document is a function of the shipped files: a verdict changed in the audit JSON changes it
    shipped = json.loads((docs / findings.DATA_DIR / findings.AUDIT_JSON).read_text())
    shipped["claims"][1]["verdict"] = "reproduced"
    (docs / findings.DATA_DIR / findings.AUDIT_JSON).write_text(json.dumps(shipped))
    changed = findings.render(docs)
    assert "| C2 | Fig. 3 | **reproduced** |" in changed and "| C2 | Fig. 3 | **inconclusive** |" in text
    assert "- **Reproduced** (2):" in changed and "- **Inconclusive**" not in changed


def test_an_audit_of_another_format_is_refused_by_name(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    findings.ship(results, figures, docs)
    path = docs / findings.DATA_DIR / findings.AUDIT_JSON
    old = json.loads(path.read_text())
    del old["format"]  # as the audits written before the format was recorded
    path.write_text(json.dumps(old))
    with pytest.raises(findings.FindingsError, match=r"audit.json: audit format 1.*needs format 2.*re-run"):
        findings.render(docs)


def test_ship_names_a_missing_input_and_changes_nothing(tmp_path):
    results, figures = _made_up_run(tmp_path)
    (results / findings.PROVENANCE_JSON).unlink()
    docs = tmp_path / "docs"
    (docs / findings.DATA_DIR).mkdir(parents=True)
    (docs / findings.DATA_DIR / "keep.txt").write_text("old")
    with pytest.raises(findings.FindingsError, match="provenance.json"):
        findings.ship(results, figures, docs)
    assert (docs / findings.DATA_DIR / "keep.txt").read_text() == "old"


def test_headline_counts_the_verdicts_and_flips():
    audit = {
        "claims": [{"verdict": v} for v in ("reproduced", "reproduced", "not reproduced", "inconclusive")],
        "context": {"experiments": {"a": {"seeds": list(range(20))}}},
        "flipped_claims": ["C3"],
    }
    assert findings.headline(audit) == (
        "At 20 seeds per curve, of the paper's 4 audited claims: 2 reproduced, 1 not reproduced and "
        "1 inconclusive; 1 claim flips under an implementation choice the paper leaves open."
    )


def test_provenance_records_a_successful_command_only(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "prov.json"
    ok = [sys.executable, "-c", "pass", "--configfile", "config/paper-local.yaml"]
    assert provenance.main([str(out), "--", *ok]) == 0
    record = json.loads(out.read_text())
    assert record["config_files"] == ["config/paper-local.yaml"]
    assert record["wall_seconds"] >= 0 and record["machine"]["cpus"] >= 1
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
    failed = tmp_path / "failed.json"
    assert provenance.main([str(failed), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert not failed.exists()


def test_readme_block_is_replaced_between_the_markers_and_missing_markers_fail(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    findings.ship(results, figures, docs)
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\n{findings.README_BEGIN}\nold headline\n{findings.README_END}\n\nrest\n")
    findings.write(docs, readme)
    text = readme.read_text()
    assert "old headline" not in text and text.startswith("# title\n") and text.endswith("\n\nrest\n")
    assert findings.headline(json.loads((results / findings.AUDIT_JSON).read_text())) in text
    readme.write_text("# no markers\n")
    with pytest.raises(findings.FindingsError, match="markers"):
        findings.write(docs, readme)


# ---------------------------------------------------------------- the shipped findings
DOCS = REPO / "docs"
#: what a newcomer sees without scrolling
README_FIRST_SCREEN_LINES = 25


def _shipped(name: str) -> dict:
    return json.loads((DOCS / findings.DATA_DIR / name).read_text(encoding="utf-8"))


def _stale() -> bool:
    """The shipped audit predates the audit's current format (re-shipped by `make findings` after a run)."""
    return _shipped(findings.AUDIT_JSON).get("format") != AUDIT_FORMAT


def test_shipped_findings_document_is_what_the_generator_makes_of_the_shipped_files():
    if _stale():
        # shipped before the audit's current footing: it must not be re-rendered into a mixed document
        with pytest.raises(findings.FindingsError, match="re-run the audit"):
            findings.render(DOCS)
        return
    assert (DOCS / findings.DOCUMENT).read_text(encoding="utf-8") == findings.render(DOCS)


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
    audit, prov = _shipped(findings.AUDIT_JSON), _shipped(findings.PROVENANCE_JSON)
    for name, experiment in audit["context"]["experiments"].items():
        assert len(experiment["seeds"]) == 20, name
    assert prov["config_files"] == ["config/paper-local.yaml"]
    assert re.fullmatch(r"[0-9a-f]{40}", prov["commit"]) and not prov["uncommitted_changes"]
    claims = yaml.safe_load((REPO / "config" / "claims.yaml").read_text(encoding="utf-8"))["claims"]
    text = (DOCS / findings.DOCUMENT).read_text(encoding="utf-8")
    if not _stale():  # a stale audit read the claims of its day; the renderer refuses it (test above)
        assert [c["id"] for c in audit["claims"]] == [c["id"] for c in claims]
    for claim in audit["claims"]:
        assert f"| {claim['id']} |" in text, claim["id"]
    if (REPO / ".git").exists():  # a checkout with history: the commit is one of main's
        ancestry = ["git", "-C", str(REPO), "merge-base", "--is-ancestor", prov["commit"], "HEAD"]
        assert subprocess.run(ancestry, check=False).returncode == 0, f"{prov['commit']} not in history"


def test_readme_first_screen_carries_the_shipped_headline_and_links_the_findings():
    first_screen = "\n".join(
        (REPO / "README.md").read_text(encoding="utf-8").splitlines()[:README_FIRST_SCREEN_LINES]
    )
    if _stale():
        assert findings.headline(_shipped(findings.AUDIT_JSON)) in first_screen
    else:
        assert findings.readme_block(DOCS) in first_screen
    assert "](docs/findings.md)" in first_screen
