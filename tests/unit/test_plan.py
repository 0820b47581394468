"""The analysis plan of a confirmatory run (issue 37, item 1): written from a pilot's results before
the run (``vhct.reporting.audit.plan``, the writer) and checked by the config loader
(``vhct.pipeline.config.plan``, the reader) before anything starts; the audit decides on the plan's
confirmatory seeds only."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from support import REPO, TINY, with_effect

from vhct.pipeline.config import ConfigError, load
from vhct.pipeline.config.plan import (
    PlanError,
    config_sha256,
    planned_seeds,
    read_plan,
    samples_sha256,
    seed_table,
)
from vhct.reporting.audit import plan as writer
from vhct.reporting.audit.claims import CLAIMS_PATH, load_claims
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.records import audit_json
from vhct.reporting.audit.runs import Run
from vhct.reporting.audit_job import audit_context

#: the made-up claim: VHCT's final regret lower than HCT's by 5 % on Garland (a size its quote states)
CLAIM = with_effect(
    {
        "id": "made-up-lowest",
        "quote": "q",
        "location": "l",
        "kind": "lowest",
        "statistic": "cumulative_regret",
        "experiments": ["garland"],
        "target": "VHCT-rho0.75",
        "others": ["HCT-rho0.75"],
        "thresholds": {"min_relative_effect": 0.05},
        "effect_of_interest": {"value": 0.9, "reason": "made up: 10 % lower"},
    }
)
CAP = 60


def made_up_runs(finals, seeds, horizon: int = 10) -> list[Run]:
    """Runs (against f* = 0) whose final cumulative regrets are ``finals``, on ``seeds``."""
    t = np.arange(1, horizon + 1)
    out = []
    for seed, final in zip(seeds, finals, strict=True):
        cumulative = final * t / horizon
        table = pd.DataFrame(
            {
                "t": t,
                "value": -np.diff(cumulative, prepend=0.0),
                "cumulative_regret": cumulative,
                "depth": 1.0,
                "step_seconds": 1e-3,
                "optimizer_seconds": 1e-4,
            }
        )
        out.append(Run(int(seed), table, 0.0))
    return out


def pilot_runs(seeds=range(20), shift: float = 0.0):
    """VHCT 3 % below HCT at a spread of 10 %: underpowered at 20 seeds (a few hundred decide it)."""
    rng = np.random.default_rng(1)
    a = 97.0 + 10.0 * rng.standard_normal(len(seeds)) + shift
    b = 100.0 + 10.0 * rng.standard_normal(len(seeds))
    return {"garland": {"VHCT-rho0.75": made_up_runs(a, seeds), "HCT-rho0.75": made_up_runs(b, seeds)}}


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A checkout in ``tmp_path`` (the working directory): a claims file of one claim, a pilot config
    (tiny, Garland at 20 seeds) with its audit on made-up runs in results/pilot/, and a confirmatory
    config declaring its plan."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config").mkdir()
    claims = yaml.safe_load(CLAIMS_PATH.read_text())
    claims["claims"] = [CLAIM]
    claims["sensitivity"] = []
    (tmp_path / "config" / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False))
    pilot = tmp_path / "config" / "pilot.yaml"
    pilot.write_text(f"base: {TINY}\noutput: pilot\nexperiments:\n  garland: {{seeds: 20}}\n")
    confirm = tmp_path / "config" / "confirm.yaml"
    confirm.write_text(
        f"base: {TINY}\noutput: confirm\nplan:\n  file: plans/confirm.yaml\n  pilot: pilot.yaml\n"
        f"  max_seeds: {CAP}\n  settings: {{PCT: 20}}\nfigures:\n  osc:\n    panels: {{0: {{seed: 20}}}}\n"
    )
    write_pilot_audit(tmp_path, pilot_runs())
    return tmp_path


def write_pilot_audit(root: Path, runs) -> None:
    claims_path = root / "config" / "claims.yaml"
    pilot = root / "config" / "pilot.yaml"
    cfg, _ = load([pilot])
    claims = load_claims(claims_path)
    context = audit_context(cfg, claims, claims_path, [str(pilot.relative_to(root))])
    audit = run_audit(claims, runs, context)
    (root / "results" / "pilot").mkdir(parents=True, exist_ok=True)
    (root / "results" / "pilot" / "audit.json").write_text(audit_json(audit))


def test_the_plan_is_written_from_the_pilot_and_read_by_the_loader(world):
    """The real writer's plan meets the real reader (the config loader): seeds from the plan,
    disjoint from the pilot's, sized by the audit's power computation, capped and named."""
    plan, path = writer.write_plan("config/confirm.yaml")
    assert path == Path("config/plans/confirm.yaml") and read_plan(path) == plan
    (comp,) = plan.claims[0].comparisons
    assert comp.arms == [["garland", "VHCT-rho0.75"], ["garland", "HCT-rho0.75"]]
    assert len(comp.samples["a"]) == len(comp.samples["b"]) == 20
    # sized at the claim's effect of interest (0.9) with the pilot's spread: within the cap
    assert 20 < comp.seeds_needed == comp.seeds <= CAP and not comp.underpowered
    assert plan.claims[0].effect_of_interest == 0.9  # frozen in the plan
    assert not plan.underpowered() and plan.start == 20 and plan.pilot.seeds["garland"] == list(range(20))
    cfg, _ = load(["config/confirm.yaml"])
    planned = list(range(20, 20 + comp.seeds))
    assert cfg.setting_seeds("garland", "VHCT-rho0.75") == planned
    assert cfg.setting_seeds("garland", "HCT-rho0.75") == planned
    assert cfg.setting_seeds("garland", "PCT") == list(range(20, 40))  # read by no claim: the floor
    assert cfg.setting_seeds("rastrigin2d", "POO") == list(range(20, 40))
    assert writer.check("config/confirm.yaml") == plan
    assert cfg.plan is not None and cfg.plan.file == "config/plans/confirm.yaml"


def test_the_seeds_are_the_audits_own_power_computation(world):
    """The plan's need is the one the audit reports for the same samples ("about N seeds per arm")."""
    plan, _ = writer.write_plan("config/confirm.yaml")
    claims = load_claims("config/claims.yaml")
    (verdict,) = run_audit(claims, pilot_runs(), None).claims
    (comp,) = verdict.experiments[0].comparisons
    assert comp.category == "underpowered"
    assert plan.claims[0].comparisons[0].seeds_needed == comp.seeds_needed
    assert planned_seeds(5, 20, 200) == (20, False) and planned_seeds(500, 20, 200) == (200, True)
    assert planned_seeds(150, 20, 200) == (150, False) and planned_seeds(None, 20, 200) == (200, True)


def test_every_variant_of_a_default_runs_the_defaults_seeds(world):
    """Several sensitivity rows put variants in one default's place (refresh, rho, re-expansion): each
    variant runs at least its default's seeds, not only the last row's."""
    from types import SimpleNamespace

    needs = [SimpleNamespace(comparisons=[SimpleNamespace(arms=[("e", "A"), ("e", "B")], seeds=60)])]
    arms = {"e": ["A", "A-current", "A-reexpand", "B"]}
    table = seed_table(needs, arms, 20, lambda e, s: 200, {"A": ["A-current", "A-reexpand"]})
    assert table == {"e": {"A": 60, "A-current": 60, "A-reexpand": 60, "B": 60}}
    plan, _ = writer.write_plan("config/confirm.yaml")
    for default, variants in plan.substitutes.items():
        for experiment, by_setting in plan.seeds.items():
            for variant in variants:
                if default in by_setting and variant in by_setting:
                    assert by_setting[variant] >= by_setting[default], (experiment, default, variant)


def one_line_error(path: str) -> str:
    with pytest.raises(ConfigError) as info:
        load([path])
    message = str(info.value)
    assert "\n" not in message and message.startswith(path) and "make plan" in message
    return message


PLAN = Path("config/plans/confirm.yaml")


def written_plan() -> dict:
    """The plan the real writer writes for the confirmatory config, as plain data (to tamper with)."""
    writer.write_plan("config/confirm.yaml")
    return yaml.safe_load(PLAN.read_text())


def test_a_missing_plan_is_refused_in_one_line(world):
    message = one_line_error("config/confirm.yaml")
    assert "config/plans/confirm.yaml is missing" in message


def edited_after_the_plan(file: str, old: str, new: str) -> str:
    """The loader's one-line error once ``file`` is edited (``old`` -> ``new``) after the plan was written."""
    writer.write_plan("config/confirm.yaml")
    path = Path(file)
    path.write_text(path.read_text().replace(old, new))
    return one_line_error("config/confirm.yaml")


@pytest.mark.parametrize(
    "file, old, new, said",
    [
        (
            "config/confirm.yaml",
            "output: confirm",
            "output: confirm\nprogress_every: 7",
            "written for another config",
        ),
        (
            "config/claims.yaml",
            "min_relative_effect: 0.05",
            "min_relative_effect: 0.06",
            "another claims file",
        ),
    ],
    ids=["config", "claims"],
)
def test_a_changed_config_or_claims_file_is_refused(world, file, old, new, said):
    assert said in edited_after_the_plan(file, old, new)


def test_a_changed_seed_count_of_the_config_is_not_a_change_of_the_config(world):
    """The config's hash leaves out what the plan determines (the seeds)."""
    source = {"experiments": {"e": {"seeds": 20, "caps": {"s": {"max_seeds": 3}}}}, "plan": {"file": "x"}}
    other = {"experiments": {"e": {"seeds": 7, "caps": {"s": {"max_seeds": 9}}}}, "plan": {"file": "y"}}
    assert config_sha256(source) == config_sha256(other)
    assert config_sha256(source) != config_sha256({**source, "progress_every": 3})


def test_a_tampered_seed_count_is_refused(world):
    data = written_plan()
    planned = data["seeds"]["garland"]["VHCT-rho0.75"]
    data["seeds"]["garland"]["VHCT-rho0.75"] = planned + 1
    PLAN.write_text(yaml.safe_dump(data))
    assert "seed counts are not its computation's" in one_line_error("config/confirm.yaml")
    data["seeds"]["garland"]["VHCT-rho0.75"] = planned
    data["claims"][0]["comparisons"][0]["seeds"] = planned + 1  # a comparison's own count
    PLAN.write_text(yaml.safe_dump(data))
    assert f"the plan's computation gives {planned}" in one_line_error("config/confirm.yaml")


def test_a_tampered_need_is_refused_by_the_full_check(world):
    """A need edited with its count (consistent for the loader) is refused by the recomputation."""
    data = written_plan()
    data["claims"][0]["comparisons"][0]["seeds_needed"] = 25
    data["claims"][0]["comparisons"][0]["seeds"] = 25
    data["seeds"]["garland"]["VHCT-rho0.75"] = data["seeds"]["garland"]["HCT-rho0.75"] = 25
    PLAN.write_text(yaml.safe_dump(data))
    load(["config/confirm.yaml"])  # consistent arithmetic
    with pytest.raises(PlanError, match="its samples give '.*', the plan '25 seeds per arm"):
        writer.check("config/confirm.yaml")


def test_edited_samples_are_refused(world):
    data = written_plan()
    data["claims"][0]["comparisons"][0]["samples"]["a"]["0"] = 1.0
    PLAN.write_text(yaml.safe_dump(data))
    assert "not to its pilot hash" in one_line_error("config/confirm.yaml")


def test_a_plan_whose_pilot_hash_differs_is_refused(world):
    """The pilot's results changed after the plan (another pilot run): refused by the full check."""
    plan, _ = writer.write_plan("config/confirm.yaml")
    writer.check("config/confirm.yaml")
    write_pilot_audit(world, pilot_runs(shift=1.0))
    with pytest.raises(PlanError, match="the pilot's results .* hash to .* the plan's pilot hash"):
        writer.check("config/confirm.yaml")
    # without the pilot's results folder, the plan is checked against its own embedded samples
    shutil.rmtree(world / "results" / "pilot")
    assert writer.check("config/confirm.yaml").pilot.samples_sha256 == samples_sha256(plan.claims)


def test_without_the_plan_a_config_is_only_inspected(world):
    """The explicit option: the config's own seed counts after the pilot's, the plan unread."""
    cfg, _ = load(["config/confirm.yaml"], plan=False)
    assert cfg.seeds("garland") == list(range(20, 22))  # tiny's 2 seeds, after the pilot's 0-19


def test_paper_local_runs_a_plan_built_from_made_up_pilot_data(tmp_path):
    """What dry-runs paper-local without its pilot (tests/integration) uses: a plan the real loader
    accepts, every arm at the claims' minimum from the config's first confirmatory seed (800)."""
    from support import made_up_plan

    cfg, _ = load([made_up_plan(tmp_path)])
    assert cfg.setting_seeds("garland", "VHCT-rho0.75") == list(range(800, 820))
    assert cfg.folder("results") == "results/paper-local"


def test_paper_local_declares_a_plan_from_the_quick_start():
    cfg, _ = load([REPO / "config" / "paper-local.yaml"], plan=False)
    assert cfg.plan is not None and cfg.plan.pilot == "config/config.yaml"
    assert cfg.plan.file == "config/plans/paper-local.yaml"
    # the first seed its figure names: after the shipped audits' 0-599 (audit.seen)
    assert min(min(cfg.seeds(e)) for e in cfg.experiments) == 800
    assert cfg.plan.experiments == {"landmine": 20, "mnist": 20} and cfg.plan.settings["BO"] == 20


def test_the_audit_decides_on_the_confirmatory_seeds_only(world):
    """A made-up pilot seed with an extreme value among the runs does not move a verdict: the audit
    of a confirmatory config reads the plan's seeds only, records the design and says so."""
    from vhct.reporting.audit.records import read_audit
    from vhct.reporting.render import write_audit

    writer.write_plan("config/confirm.yaml")
    cfg, _ = load(["config/confirm.yaml"])
    claims = load_claims("config/claims.yaml")
    context = audit_context(cfg, claims, "config/claims.yaml", ["config/confirm.yaml"])
    seeds = cfg.setting_seeds("garland", "VHCT-rho0.75")
    rng = np.random.default_rng(3)
    a, b = 80.0 + 5.0 * rng.standard_normal(len(seeds)), 100.0 + 5.0 * rng.standard_normal(len(seeds))
    confirmatory = {
        "garland": {"VHCT-rho0.75": made_up_runs(a, seeds), "HCT-rho0.75": made_up_runs(b, seeds)}
    }
    clean = run_audit(claims, confirmatory, context)
    polluted = {"garland": {s: [*made_up_runs([1e6], [0]), *r] for s, r in confirmatory["garland"].items()}}
    polluted["garland"]["HCT-rho0.75"] = [*made_up_runs([-1e6], [1]), *confirmatory["garland"]["HCT-rho0.75"]]
    dirty = run_audit(claims, polluted, context)
    assert clean.claims[0].verdict == dirty.claims[0].verdict == "reproduced"
    assert clean.claims[0].experiments == dirty.claims[0].experiments  # the same comparisons, numbers
    assert dirty.context.design.left_out_runs == 2 and clean.context.design.left_out_runs == 0
    # without the design the extreme pilot seeds do move it
    assert (
        run_audit(claims, polluted, context.model_copy(update={"design": None})).claims[0].verdict
        != "reproduced"
    )
    design = dirty.context.design
    assert design.pilot_seeds["garland"] == list(range(20)) and design.seed_span == f"20-{seeds[-1]}"
    assert design.plan_file == "config/plans/confirm.yaml" and not design.underpowered
    md, js, html = (world / f"audit.{x}" for x in ("md", "json", "html"))
    write_audit(dirty, md, js, html)
    assert read_audit(js).context.design == design  # the writer meets the reader
    text = md.read_text()
    assert "Design: confirmatory" in text and "2 runs on other seeds were not used" in text
    assert "confirmatory seeds only (20-" in text and "Design: confirmatory" in html.read_text()


def test_an_audit_without_a_plan_says_it_is_exploratory(world, tmp_path):
    from vhct.reporting.render import write_audit

    cfg, _ = load(["config/pilot.yaml"])
    claims = load_claims("config/claims.yaml")
    audit = run_audit(
        claims, pilot_runs(), audit_context(cfg, claims, "config/claims.yaml", ["config/pilot.yaml"])
    )
    assert audit.context.design is None
    write_audit(audit, tmp_path / "a.md", tmp_path / "a.json", tmp_path / "a.html")
    assert "Design: exploratory" in (tmp_path / "a.md").read_text()


@pytest.mark.integration  # a real make run (its checks start Python)
@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_paper_local_fails_fast_on_a_plan_error(tmp_path):
    """`make paper-local` checks the plan first: a missing one stops it in one line naming the file and
    `make plan`, before Snakemake (or the provenance recorder around it) is started."""
    import subprocess
    import sys

    config = tmp_path / "paper-local.yaml"
    config.write_text(f"base: {REPO / 'config' / 'paper-local.yaml'}\nplan: {{file: missing-plan.yaml}}\n")
    stamp = tmp_path / "stamp"
    stamp.touch()
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-C",
            str(REPO),
            f"BIN={Path(sys.executable).parent}",
            f"STAMP={stamp}",
            f"PAPER_LOCAL={config}",
            "paper-local",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if not line.startswith("make")]
    assert errors == [
        f"{config}: the analysis plan {tmp_path / 'missing-plan.yaml'} is missing: run `make plan` "
        "(after the pilot, `make figures`)"
    ]
    assert "snakemake" not in done.stdout and "provenance" not in done.stdout


def test_make_plan_states_the_planned_runs_cost_at_the_pilots_seconds_per_round(world):
    """The cost `make plan` prints: per (experiment, setting) the pilot's measured seconds per round
    times the confirmatory rounds and planned seeds; settings the pilot did not time are named."""
    timing = world / "results" / "pilot" / "aggregates" / "garland"
    timing.mkdir(parents=True)
    per_round = {"VHCT-rho0.75": 2e-3, "HCT-rho0.75": 1e-3}
    pd.DataFrame(
        [
            {
                "setting": s,
                "algorithm": s.split("-")[0],
                "seed": k,
                "rounds": 10,
                "wall_seconds": 1.0,
                "step_seconds_sum": x * 10,
                "optimizer_seconds_sum": x * 5,
            }
            for s, x in per_round.items()
            for k in range(20)
        ]
    ).to_csv(timing / "timing.csv", index=False)
    plan, _ = writer.write_plan("config/confirm.yaml")
    cfg, _ = load(["config/confirm.yaml"])
    cost = writer.plan_cost("config/confirm.yaml", plan)
    rows = {(r.experiment, r.setting): r for r in cost.rows}
    for setting, x in per_round.items():
        row = rows["garland", setting]
        runs = len(cfg.setting_seeds("garland", setting)) * cfg.run_horizon("garland", setting)
        assert row.seconds == pytest.approx(x * runs)
    assert cost.total_seconds == pytest.approx(sum(r.seconds for r in cost.rows if r.seconds is not None))
    assert "PCT on garland" in cost.unmeasured  # the made-up pilot timed two settings only
    line = writer.cost_summary(cost, 2)
    assert f"at least {cost.total_seconds / 120:.0f} min on 2 cores" in line and "not counted" in line


def test_the_need_comes_from_the_stated_effect_and_the_pilots_spread_not_its_estimate(world):
    """A pilot whose estimate sits exactly on the margin (0.95) needs what one 3 % below does: the
    seeds are sized at the claim's effect of interest with the pilot's spread, not at its estimate
    (which, on a margin, once gave needs of hundreds of millions)."""
    plan, _ = writer.write_plan("config/confirm.yaml")
    (comp,) = plan.claims[0].comparisons
    mean_a, mean_b = (np.mean(list(comp.samples[side].values())) for side in ("a", "b"))
    write_pilot_audit(world, pilot_runs(shift=0.95 * mean_b - mean_a))  # the same spread, on the margin
    (moved,) = writer.make_plan("config/confirm.yaml").claims[0].comparisons
    assert moved.estimate == pytest.approx(0.95) and comp.estimate != pytest.approx(0.95)
    assert moved.seeds_needed == comp.seeds_needed and moved.seeds == comp.seeds


def test_a_need_past_the_cap_runs_at_the_cap_and_no_larger_need_is_printed(world, capsys):
    """A smaller effect of interest (6 % instead of 10 %) needs far more than the cap: the comparison
    runs at the cap, reads "underpowered at the cap (60 seeds)" in the plan, its notes and `make plan`'s
    output, and the pilot's audit says the same at the audit's cap; no number of seeds past a cap is
    written anywhere."""
    import re

    from vhct.reporting.audit.verdicts import NEED_CAP

    claims = Path("config/claims.yaml")
    data = yaml.safe_load(claims.read_text())
    data["claims"][0]["effect_of_interest"]["value"] = 0.94
    claims.write_text(yaml.safe_dump(data, sort_keys=False))
    write_pilot_audit(world, pilot_runs())
    assert writer.main(["config/confirm.yaml"]) == 0
    printed = capsys.readouterr().out
    plan = read_plan(PLAN)
    (comp,) = plan.claims[0].comparisons
    assert comp.underpowered and comp.seeds == CAP and comp.seeds_needed is None
    assert comp.note == f"underpowered at the cap ({CAP} seeds)" and comp.note in printed
    cfg, _ = load(["config/confirm.yaml"])
    assert cfg.setting_seeds("garland", "VHCT-rho0.75") == list(range(20, 20 + CAP))
    # the same need from the audit's own computation is past the cap: never written out
    claim = load_claims(claims).claims[0]
    assert writer.seeds_needed(claim, "garland", comp.a, comp.b, comp.samples) > NEED_CAP
    (verdict,) = run_audit(load_claims(claims), pilot_runs(), None).claims
    (pilot_comp,) = verdict.experiments[0].comparisons
    assert f"underpowered at the cap ({NEED_CAP} seeds)" in pilot_comp.reason
    assert pilot_comp.seeds_needed is None and verdict.seeds_needed is None
    for text, cap in ((PLAN.read_text(), CAP), (printed, CAP), (pilot_comp.reason, NEED_CAP)):
        stated = [int(n.replace(",", "")) for n in re.findall(r"(\d[\d,]*) seeds", text)]
        assert stated and max(stated) <= cap, text
    needs = [p["seeds_needed"] for c in yaml.safe_load(PLAN.read_text())["claims"] for p in c["comparisons"]]
    assert all(n is None or n <= CAP for n in needs)


def test_the_audits_need_cap_is_the_confirmatory_configs():
    from vhct.reporting.audit.verdicts import NEED_CAP

    cfg, _ = load([REPO / "config" / "paper-local.yaml"], plan=False)
    assert cfg.plan is not None and cfg.plan.max_seeds == NEED_CAP


def test_an_effect_of_interest_outside_the_claimed_region_is_refused():
    from vhct.reporting.audit.claims_model import Claim

    data = {**CLAIM, "alpha": 0.05, "min_seeds": 20, "round": "final", "require": "all"}
    with pytest.raises(ValueError, match=r"effect_of_interest/value: 0.97 is not inside the claimed region"):
        Claim.model_validate({**data, "effect_of_interest": {"value": 0.97, "reason": "r"}})


# ---------------------------------------------------------------- seeds used before (issue 50, item 1)


def git(root: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def ship(root: Path, seeds: dict[str, list[int]], pair: tuple[list[int], list[int]] = ([], [])) -> str:
    """Commit a made-up shipped audit (docs/findings/audit.json) whose experiments ran ``seeds``, with a
    contrast's per-seed values on garland / himmelblau (``pair``); its commit."""
    import json

    audit = {
        "format": 6,
        "context": {"experiments": {e: {"seeds": s, "settings": {}} for e, s in seeds.items()}},
        "claims": [
            {
                "experiments": [
                    {
                        "comparisons": [
                            {
                                "experiment": "garland / himmelblau",
                                "values_a": {str(s): 1.0 for s in pair[0]},
                                "values_a2": {str(s): 1.0 for s in pair[1]},
                            }
                        ]
                    }
                ]
            }
        ],
    }
    path = root / "docs" / "findings" / "audit.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(audit))
    git(root, "add", "docs/findings/audit.json")
    git(root, "commit", "-q", "-m", f"ship {len(seeds)} experiments")
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def history(world):
    """The world as a git repository whose history shipped two audits: seeds 0-19, then up to 45 on
    garland (and himmelblau 60-61 through a contrast's second pair). The figure's panel names a seed
    the confirmatory runs hold (they start after 61)."""
    confirm = world / "config" / "confirm.yaml"
    confirm.write_text(confirm.read_text().replace("{seed: 20}", "{seed: 100}"))
    git(world, "init", "-q")
    git(world, "config", "user.email", "t@example.org")
    git(world, "config", "user.name", "t")
    first = ship(world, {"garland": list(range(20))})
    second = ship(world, {"garland": list(range(46))}, pair=([0, 1], [60, 61]))
    return world, first, second


def test_the_seeds_a_shipped_audit_used_are_read_from_every_committed_version(history):
    from vhct.reporting.audit import seen

    world, first, second = history
    versions = seen.shipped_versions(world)
    assert [v.commit for v in versions] == [first, second]  # oldest first
    assert versions[1].seeds == {"garland": list(range(46)), "himmelblau": [60, 61]}
    used = seen.seen_seeds(world)
    assert used["garland"][3] == first and used["garland"][45] == second and used["himmelblau"][61] == second
    assert seen.largest_seen(used) == 61
    assert seen.first_overlap(used, {"garland": range(46, 60), "himmelblau": [62]}) is None
    clash = seen.first_overlap(used, {"garland": [44, 45]})
    assert (clash.experiment, clash.seed, clash.commit) == ("garland", 44, second)


def test_an_audits_seeds_are_read_per_experiment_from_every_format():
    """Each per-seed sample counts for the experiment it was run on: across a pair, the side whose
    setting names an experiment (``A on second``) is that experiment's; a contrast's second pair is
    the second's; an old audit's ``values_by_seed`` is the experiment of the record above it."""
    from vhct.reporting.audit.seen import audit_seeds

    across = {
        "experiment": "e1 / e2",
        "a": "A on e1",
        "b": "A on e2",
        "values_a": {"0": 1.0},
        "values_b": {"7": 1.0},
    }
    contrast = {"experiment": "e1 / e3", "a": "A", "b": "B", "values_a": {"1": 1.0}, "values_b2": {"8": 1.0}}
    old = {"experiment": "e4", "settings": [{"values_by_seed": {"3": 1.0, "x": 2.0}}]}
    data = {"context": {"experiments": {"e5": {"seeds": [2], "settings": {"A": {"seeds": [4]}}}}}}
    data["claims"] = [{"comparisons": [across, contrast]}, old]
    assert audit_seeds(data) == {"e5": [2, 4], "e1": [0, 1], "e2": [7], "e3": [8], "e4": [3]}


def test_the_plan_starts_after_every_seed_a_shipped_audit_used(history):
    world, first, second = history
    plan, _ = writer.write_plan("config/confirm.yaml")
    assert plan.start == 62 and plan.seen == {first: 19, second: 61}
    cfg, _ = load(["config/confirm.yaml"])
    assert min(cfg.setting_seeds("garland", "VHCT-rho0.75")) == 62
    assert writer.check("config/confirm.yaml") == plan


def test_the_plan_refuses_confirmatory_seeds_an_earlier_shipped_audit_used(history):
    """A plan whose seeds a shipped audit used (one shipped after it, or one edited to start earlier) is
    refused by the full check (`make paper-local`) in one line naming the commit and the seed."""
    world, _, second = history
    writer.write_plan("config/confirm.yaml")
    later = ship(world, {"garland": [70, 71]})  # a shipped audit ran seeds the plan holds
    with pytest.raises(PlanError) as info:
        writer.check("config/confirm.yaml")
    message = str(info.value)
    assert "\n" not in message and "make plan" in message
    assert f"confirmatory seed 70 of garland was used by the shipped audit of commit {later[:12]}" in message
    git(world, "revert", "--no-edit", "HEAD")  # the version stays in the history: still refused
    with pytest.raises(PlanError, match=f"seed 70 of garland .* commit {later[:12]}"):
        writer.check("config/confirm.yaml")
    plan, _ = writer.write_plan("config/confirm.yaml")  # written again: after seed 71
    assert plan.start == 72
    # `make plan`'s own guard: a plan starting where the second shipped audit ran is refused
    with pytest.raises(PlanError, match=f"confirmatory seed 20 of garland .* commit {second[:12]}"):
        writer.refuse_seen(plan.model_copy(update={"start": 20}), "config/confirm.yaml")


def test_a_confirmatory_audit_states_the_plans_need_the_one_need_of_a_comparison(world):
    """The confirmatory audit's underpowered comparison says its plan's need (the pilot's spread at the
    effect of interest), not another one from the confirmatory spread: one need per comparison."""
    plan, _ = writer.write_plan("config/confirm.yaml")
    (planned,) = plan.claims[0].comparisons
    cfg, _ = load(["config/confirm.yaml"])
    claims = load_claims("config/claims.yaml")
    context = audit_context(cfg, claims, "config/claims.yaml", ["config/confirm.yaml"])
    seeds = cfg.setting_seeds("garland", "VHCT-rho0.75")
    rng = np.random.default_rng(5)  # 3 % below at three times the pilot's spread: undecided
    a, b = 97.0 + 30.0 * rng.standard_normal(len(seeds)), 100.0 + 30.0 * rng.standard_normal(len(seeds))
    runs = {"garland": {"VHCT-rho0.75": made_up_runs(a, seeds), "HCT-rho0.75": made_up_runs(b, seeds)}}
    (comp,) = run_audit(claims, runs, context).claims[0].experiments[0].comparisons
    (own,) = run_audit(claims, runs, None).claims[0].experiments[0].comparisons
    assert comp.category == own.category == "underpowered"
    assert comp.seeds_needed == planned.seeds_needed and own.seeds_needed != planned.seeds_needed
    said = f"the analysis plan: {planned.seeds_needed} seeds per arm give 80 % power at the effect"
    assert said in comp.reason and said not in own.reason
