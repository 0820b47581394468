"""The findings document (vhct.reporting.findings): rendered from a shipped run, and the shipped one."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from findings_run import made_up_run as _made_up_run
from support import REPO

from vhct.reporting import findings, ship
from vhct.reporting.audit import AUDIT_FORMAT


def test_a_shipped_run_renders_every_part(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    copied = ship.ship(results, figures, docs)
    assert all(p.is_file() for p in copied)
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
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
    ship.ship(results, figures, docs)
    path = docs / findings.DATA_DIR / findings.AUDIT_JSON
    old = json.loads(path.read_text())
    del old["format"]  # as the audits written before the format was recorded
    path.write_text(json.dumps(old))
    with pytest.raises(findings.FindingsError, match=r"audit.json: audit format 1.*needs format 2.*re-run"):
        findings.render(docs)


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


# ---------------------------------------------------------------- the shipped findings
DOCS = REPO / "docs"


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
    assert prov["config_files"] == ["config/config.yaml", "config/paper.yaml", "config/paper-local.yaml"]
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


def test_the_gpyopt_cost_explains_only_bos_cap():
    """A capped setting that is not BO gets its config key as the reason, not GPyOpt's cost."""
    settings = {
        "BO": {"algorithm": "BO", "max_horizon": 50},
        "T-HOO-short": {"algorithm": "T-HOO", "max_horizon": 20},
        "VHCT": {"algorithm": "VHCT"},
    }
    garland = {"horizon": 100, "seeds": [0, 1], "settings": settings}
    audit = {"context": {"experiments": {"garland": garland}}}
    lines = findings.scale_lines(audit)
    bo = next(line for line in lines if line.startswith("- **BO stops at t = 50"))
    short = next(line for line in lines if line.startswith("- **T-HOO-short stops at t = 20"))
    assert findings.BO_REASON in bo
    assert findings.BO_REASON not in short and "GPyOpt" not in short and findings.CAP_REASON in short
    assert not any("VHCT" in line for line in lines)


def test_a_setting_that_runs_fewer_seeds_is_said_with_its_count():
    """BO at 10 of 20 seeds (max_seeds) is stated among what was not run at full scale."""
    settings = {"BO": {"algorithm": "BO", "max_seeds": 10}, "VHCT": {"algorithm": "VHCT"}}
    landmine = {"horizon": 50, "seeds": list(range(20)), "settings": settings}
    audit = {"context": {"experiments": {"landmine": landmine}}}
    lines = findings.scale_lines(audit)
    assert f"- **BO runs 10 seeds**, not all, in landmine. {findings.SEEDS_REASON}" in lines
    assert not any("VHCT" in line for line in lines)
    settings["BO"]["max_seeds"] = 20  # a cap at the experiment's count takes none away
    nothing = "- Nothing: every experiment ran at the configured paper scale."
    assert findings.scale_lines(audit) == [nothing, ""]
