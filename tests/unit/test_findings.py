"""The findings generator (vhct.reporting.findings) and the run provenance recorder."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support import REPO

from vhct.pipeline import provenance
from vhct.reporting import findings
from vhct.reporting.audit import AUDIT_FORMAT, Comparison
from vhct.reporting.audit.records import audit_json, parse_audit


def _complete(audit: dict) -> dict:
    """The made-up audit with every field its records require (plausible values where unset)."""
    claim = {"kind": "lowest", "statistic": "cumulative_regret", "alpha": 0.05, "min_seeds": 20,
             "round": "final", "thresholds": {}, "experiments": [], "sensitivity": []}  # fmt: skip
    audit = {"summary": {}, "rules": {"footing": "f", "lowest": "r"}, **audit}
    audit["claims"] = [{**claim, **c} for c in audit["claims"]]
    for c in audit["claims"]:
        c["experiments"] = [{"comparisons": [], **e} for e in c["experiments"]]
    for choice in audit["sensitivity"]:
        choice.setdefault("substitute", {})
        choice["claims"] = [{"common_rounds": {}, "variant_coverage": "", "variant_experiments": [], **r}
                            for r in choice["claims"]]  # fmt: skip
    return audit


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
    audit = _complete(audit)
    # the run started an hour ago and ends in two minutes: the files written now lie within it
    config = provenance.config_record([REPO / "config" / "paper-local.yaml"])
    config["figures"] = ["fig3a_garland", "fig3c_mnist"]
    audit["context"]["configfiles"] = config["config_files"]
    results.mkdir(parents=True)
    (results / findings.AUDIT_JSON).write_text(audit_json(parse_audit(audit)))  # the records' writer
    started = datetime.now(UTC) - timedelta(seconds=3600)
    prov = provenance.record(
        ["snakemake", "--configfile", "config/paper-local.yaml"], started, 3725.0, config
    )
    (results / findings.PROVENANCE_JSON).write_text(json.dumps(prov))
    for name, exp in audit["context"]["experiments"].items():
        folder = results / "aggregates" / name
        folder.mkdir(parents=True)
        pd.DataFrame(
            {"setting": ["VHCT-rho0.75", "BO"], "horizon": [exp["horizon"], 50], "n_seeds": [20, 20],
             "final_mean": [12.5, 3.25], "final_std": [1.5, 2.0]}
        ).to_csv(folder / "final.csv", index=False)  # fmt: skip
        pd.DataFrame(
            {"setting": ["VHCT-rho0.75", "BO"], "algorithm": ["VHCT", "BO"], "seed": [0, 0],
             "rounds": [exp["horizon"], 50], "wall_seconds": [0.5, 25.0]}
        ).to_csv(folder / "timing.csv", index=False)  # fmt: skip
    figures.mkdir(parents=True)
    for name in ("fig3a_garland", "fig3c_mnist", "tiny_regret"):  # tiny_regret: another config's
        (figures / f"{name}.png").write_bytes(b"\x89PNG")
    return results, figures


def test_ship_copies_a_run_into_docs_and_renders_every_part(tmp_path):
    results, figures = _made_up_run(tmp_path)
    docs = tmp_path / "docs"
    copied = findings.ship(results, figures, docs)
    assert all(p.is_file() for p in copied)
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    audit = json.loads((results / findings.AUDIT_JSON).read_text())
    assert findings.headline(audit) in text
    for needle in ("| C1 |", "| C2 |", "C1 flips: reproduced -> inconclusive", "| D1 |", "BO stops at t = 50",
                   "mnist runs in test-split mode", "1 h 02 min 05 s", "config/paper-local.yaml",
                   "12.5 ± 1.5",
                   "#### C1\n\n**reproduced** on garland, mnist. Sec. 5. read as the lowest final regret",
                   "- mnist: reproduced (vs BO: p = 0.02)",
                   "#### C2\n\n**inconclusive** on garland. Fig. 3. VHCT and HCT alike",
                   "| C1 | **reproduced** | VHCT below BO | osc-refresh (inconclusive) | [why](#c1) |",
                   # the opening summary, from the audit JSON
                   "- **Scope.** 3 claims of the paper", "2 experiments (garland, mnist) at 20 seeds",
                   "- **Reproduced** (1):\n  - [C1](#c1) (Sec. 5)",
                   "- **Not reproduced** (1):\n  - [C3](#c3) (App.): mnist: "
                   "BO vs VHCT-rho0.75 at t = 50 of 100, ratio of means 7",
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
    assert "| C2 | **reproduced** |" in changed and "| C2 | **inconclusive** |" in text
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


def snapshot(*folders: Path) -> dict[str, bytes]:
    """Every file below ``folders`` (paths relative to their parent) with its bytes."""
    return {
        str(path.relative_to(folder.parent)): path.read_bytes()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def shipped(tmp_path):
    """A run shipped once into docs/ (with a README), then a second made-up run to ship over it."""
    first, first_figures = _made_up_run(tmp_path / "first")
    docs, readme = tmp_path / "docs", tmp_path / "README.md"
    readme.write_text(f"# title\n\n{findings.README_BEGIN}\nold\n{findings.README_END}\n")
    findings.ship(first, first_figures, docs, readme)
    results, figures = _made_up_run(tmp_path / "second")
    return results, figures, docs, readme


def refused(results: Path, figures: Path, docs: Path, readme: Path, match: str) -> None:
    """Ship must refuse with ``match`` in its message and leave docs/ and the README byte-unchanged."""
    before = snapshot(docs), readme.read_bytes()
    with pytest.raises(findings.FindingsError, match=match):
        findings.ship(results, figures, docs, readme)
    assert (snapshot(docs), readme.read_bytes()) == before


def backdate(path: Path, seconds: float) -> None:
    stamp = path.stat().st_mtime + seconds
    os.utime(path, (stamp, stamp))


def test_ship_refuses_an_audit_of_other_config_files(shipped):
    """make paper-local, then make figures (default config), then make findings: refused."""
    results, figures, docs, readme = shipped
    audit = json.loads((results / findings.AUDIT_JSON).read_text())
    audit["context"]["configfiles"] = ["config/config.yaml"]
    (results / findings.AUDIT_JSON).write_text(json.dumps(audit))
    refused(
        results,
        figures,
        docs,
        readme,
        r"made with the config file\(s\) config/config.yaml, the recorded run with",
    )


def test_ship_refuses_outputs_written_after_the_recorded_run(shipped):
    results, figures, docs, readme = shipped
    prov = json.loads((results / findings.PROVENANCE_JSON).read_text())
    end = datetime.fromisoformat(prov["finished_utc"]).timestamp()
    later = end + 600 - (figures / "fig3a_garland.png").stat().st_mtime
    backdate(figures / "fig3a_garland.png", later)  # a figure rewritten by a later run
    refused(
        results, figures, docs, readme, "fig3a_garland.png was written at .* after the recorded run ended"
    )
    backdate(figures / "fig3a_garland.png", -later)
    backdate(results / findings.AUDIT_JSON, -7200)  # an audit older than the run's start
    refused(results, figures, docs, readme, "audit.json was written at .* outside the recorded run")


def test_ship_refuses_aggregates_of_another_config(shipped):
    results, figures, docs, readme = shipped
    final = results / "aggregates" / "garland" / "final.csv"
    table = pd.read_csv(final)
    table["n_seeds"] = 4  # the default config's seeds
    table.to_csv(final, index=False)
    refused(results, figures, docs, readme, r"final.csv .* with seeds \{'VHCT-rho0.75': 4")


def test_ship_refuses_a_different_run_id_or_config_checksum_when_the_audit_records_them(shipped):
    results, figures, docs, readme = shipped
    audit = json.loads((results / findings.AUDIT_JSON).read_text())
    prov = json.loads((results / findings.PROVENANCE_JSON).read_text())
    audit["context"]["run_id"] = prov["run_id"] + "-other"
    (results / findings.AUDIT_JSON).write_text(json.dumps(audit))
    refused(results, figures, docs, readme, "records run_id .* they come from different runs")
    audit["context"]["run_id"] = prov["run_id"]
    audit["context"]["config_sha256"] = {k: "0" * 64 for k in prov["config_sha256"]}
    (results / findings.AUDIT_JSON).write_text(json.dumps(audit))
    refused(results, figures, docs, readme, "records config_sha256")
    audit["context"]["config_sha256"] = prov["config_sha256"]
    (results / findings.AUDIT_JSON).write_text(json.dumps(audit))
    findings.ship(results, figures, docs, readme)  # the same ids: shipped


def test_ship_refuses_an_older_provenance_record_and_a_readme_without_markers(shipped):
    results, figures, docs, readme = shipped
    prov = json.loads((results / findings.PROVENANCE_JSON).read_text())
    del prov["run_id"], prov["finished_utc"]
    (results / findings.PROVENANCE_JSON).write_text(json.dumps(prov))
    refused(results, figures, docs, readme, "lacks run_id, finished_utc")
    results, figures = _made_up_run(readme.parent / "third")
    readme.write_text("# no markers any more\n")
    refused(results, figures, docs, readme, "markers")


def test_ship_copies_only_the_figures_the_findings_link(shipped):
    results, figures, docs, readme = shipped
    (docs / findings.FIGURES_DIR / "stale.png").write_bytes(b"old")  # from an earlier shipping
    shipped_files = findings.ship(results, figures, docs, readme)
    assert sorted(p.name for p in (docs / findings.FIGURES_DIR).iterdir()) == [
        "fig3a_garland.png",
        "fig3c_mnist.png",
    ]
    text = (docs / findings.DOCUMENT).read_text(encoding="utf-8")
    assert set(findings.FIGURE_LINK.findall(text)) == {"figures/fig3a_garland.png", "figures/fig3c_mnist.png"}
    assert "tiny_regret" not in text  # in figures/, but not a figure of the recorded run's config
    assert all(p.is_file() for p in shipped_files) and docs / findings.DOCUMENT in shipped_files
    assert findings.headline(json.loads((results / findings.AUDIT_JSON).read_text())) in readme.read_text()
    assert not list(docs.glob(".findings-staging-*"))


def test_headline_counts_the_verdicts_and_flips():
    audit = _complete({
        "format": AUDIT_FORMAT, "sensitivity": [], "discrepancies": [], "reading_flips": [],
        "claims": [{"id": f"C{i}", "quote": "q", "location": "l", "verdict": v, "reason": "r",
                    "coverage": "a"}
                   for i, v in enumerate(("reproduced", "reproduced", "not reproduced", "inconclusive"))],
        "context": {"experiments": {"a": {"seeds": list(range(20))}}},
        "flipped_claims": ["C3"],
    })  # fmt: skip
    assert findings.headline(audit) == (
        "At 20 seeds per curve, of the paper's 4 audited claims: 2 reproduced, 1 not reproduced and "
        "1 inconclusive; 1 claim flips under an implementation choice the paper leaves open."
    )


def test_provenance_records_a_successful_command_only(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out, seen = tmp_path / "prov.json", tmp_path / "run-id"
    write_id = "import os, sys; open(sys.argv[1], 'w').write(os.environ['VHCT_RUN_ID'])"
    ok = [sys.executable, "-c", write_id, str(seen), "--configfile", "config/paper-local.yaml"]
    assert provenance.main([str(out), "--", *ok]) == 0
    record = json.loads(out.read_text())
    chain = ["config/config.yaml", "config/paper.yaml", "config/paper-local.yaml"]  # bases first
    assert record["config_files"] == chain
    assert record["config_sha256"] == {p: hashlib.sha256((REPO / p).read_bytes()).hexdigest() for p in chain}
    assert record["figures"] == list(yaml.safe_load((REPO / "config" / "config.yaml").read_text())["figures"])
    assert record["run_id"] == seen.read_text()  # the command's jobs see the run's id
    started = datetime.fromisoformat(record["started_utc"])
    assert datetime.fromisoformat(record["finished_utc"]) >= started
    assert record["wall_seconds"] >= 0 and record["machine"]["cpus"] >= 1
    assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
    failed = tmp_path / "failed.json"
    assert provenance.main([str(failed), "--", sys.executable, "-c", "raise SystemExit(3)"]) == 3
    assert not failed.exists()
    bad = tmp_path / "bad.yaml"
    bad.write_text("progress_every: 5\n")
    ran = tmp_path / "ran"
    touch = [sys.executable, "-c", f"open({str(ran)!r}, 'w')", "--configfile", str(bad)]
    assert provenance.main([str(failed), "--", *touch]) == 1  # an invalid config: nothing runs
    assert not ran.exists() and not failed.exists()


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


def test_readme_first_screen_carries_the_shipped_headline_and_links_the_findings():
    first_screen = "\n".join(
        (REPO / "README.md").read_text(encoding="utf-8").splitlines()[:README_FIRST_SCREEN_LINES]
    )
    if _stale():
        assert findings.headline(_shipped(findings.AUDIT_JSON)) in first_screen
    else:
        assert findings.readme_block(DOCS) in first_screen
    assert "](docs/findings.md)" in first_screen


def _scale_section(experiments: dict) -> list[str]:
    """The findings' "Not at the paper's full scale" lines of an audit of these experiments."""
    from vhct.reporting.audit.render import render_findings

    audit = parse_audit(_complete({"format": AUDIT_FORMAT, "claims": [], "sensitivity": [],
                                   "discrepancies": [], "reading_flips": [], "flipped_claims": [],
                                   "context": {"experiments": experiments}}))  # fmt: skip
    prov = {"commit": None, "config_files": [], "command": "c", "started_utc": "s", "wall_seconds": 1.0,
            "machine": {"cpus": 1, "cpu_model": "m", "system": "s", "python": "3"},
            "versions": {"numpy": "2.0"}}
    text = render_findings(audit, prov, {}, [], "figures")
    assert "| package versions | numpy 2.0 |" in text  # the provenance's versions, when recorded
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
    lines = _scale_section({"garland": {"objective": "garland", "horizon": 100, "seeds": [0, 1],
                                        "settings": settings}})  # fmt: skip
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
    """The README's headline, the findings' summary and the table at a glance, from one renderer."""
    audit = findings.read_audit(DOCS / findings.DATA_DIR / findings.AUDIT_JSON)
    text = findings.render(DOCS)
    table = text[text.index("| claim | verdict | decided by |") : text.index("### Why, claim by claim")]
    rows = {m[0]: m[1] for m in re.findall(r"^\| ([\w-]+) \| \*\*([^*]+)\*\* \|", table, re.M)}
    assert list(rows) == [c.id for c in audit.claims]
    counts = {v: list(rows.values()).count(v) for v in set(rows.values())}
    head = findings.headline(audit)
    for verdict, n in counts.items():
        assert f"{n} {verdict}" in head
    summary = text[text.index("## Summary") : text.index("## Provenance")]
    assert f"- **Reproduced** ({counts.get('reproduced', 0)}):" in summary
    assert f"- **Not reproduced** ({counts.get('not reproduced', 0)}):" in summary
    assert f"- **Inconclusive** ({counts.get('inconclusive', 0)})" in summary
    for claim, verdict in rows.items():
        if verdict in ("reproduced", "not reproduced"):
            assert f"  - [{claim}](#{claim})" in summary
    assert f"**{head}**" in text and head in findings.readme_block(DOCS)
    # every reason is linked from its line, and no regret reference is said twice on one line
    for claim in rows:
        assert f"[why](#{claim})" in table and f"\n#### {claim}\n" in text
    for line in text.split("\n"):
        assert line.count("regret against the best value observed") <= 1 or line.startswith("  - "), line
