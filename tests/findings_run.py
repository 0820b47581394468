"""A made-up finished run (results/, figures/, provenance record) for the findings' and ship's tests."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from support import REPO, run_spec, with_effect

from vhct.pipeline import provenance
from vhct.pipeline.aggregate import FINAL_COLUMNS, TIMING_COLUMNS, curve_table, timing_table, write_table
from vhct.pipeline.jobs import run_job
from vhct.pipeline.layout import AUDIT_JSON, FINAL_TABLE, TIMING_TABLE, ResultsFolder
from vhct.pipeline.stale import AuditJob, write_spec
from vhct.pipeline.store import RunJob
from vhct.pipeline.versions import package_versions, run_source
from vhct.reporting.audit.records import AUDIT_FORMAT, Comparison, parse_audit
from vhct.reporting.render import verdict_table

#: rounds of the made-up run's one real run (its record is what ship checks; its numbers are not)
SIDECAR_RUN_ROUNDS = 5


#: a made-up claim's verdict keys (the rest of a flat made-up claim is its claim record)
VERDICT_KEYS = ("verdict", "category", "seeds_needed", "reason", "coverage", "experiments")


def complete(audit: dict) -> dict:
    """The made-up audit with every field its records require (plausible values where unset): each
    flat made-up claim split into its claim record and its verdict, each choice into its record."""
    claim = {
        "kind": "lowest",
        "statistic": "cumulative_regret",
        "alpha": 0.05,
        "min_seeds": 20,
        "round": "final",
        "require": "all",
        "target": "A",
        "others": ["B"],
        "experiments": ["e"],
        "thresholds": {"min_relative_effect": 0.05},
        "effect_of_interest": {"value": 0.9, "reason": "made up"},
    }
    audit = {"summary": {}, "rules": {"footing": "f", "lowest": "r"}, "conditions": {}, **audit}
    flat = audit["claims"]
    audit["claims"] = [
        {
            "claim": with_effect(
                {**claim, **{k: v for k, v in c.items() if k not in VERDICT_KEYS and k != "sensitivity"}}
            ),
            "experiments": [],
            **{k: v for k, v in c.items() if k in VERDICT_KEYS},
        }
        for c in flat
    ]
    for c in audit["claims"]:
        c["experiments"] = [{"comparisons": [], **e} for e in c["experiments"]]
        if c["claim"]["target"] in c["claim"]["others"]:
            c["claim"]["others"] = [f"not {c['claim']['target']}"]
    audit["context"] = {"experiments": {}, **audit.get("context", {})}
    for name, exp in audit["context"]["experiments"].items():  # as Config.experiment_info gives them
        exp = audit["context"]["experiments"][name] = {
            "name": name,
            "title": name,
            "objective": "garland",
            "objective_params": {},
            "noise": 0.05,
            "horizon": 100,
            "seeds": list(range(20)),
            "settings": {},
            **exp,
        }
        for setting, info in exp["settings"].items():
            exp["settings"][setting] = {
                "algorithm": setting,
                "label": setting,
                "params": {},
                "horizon": exp["horizon"],
                "seeds": exp["seeds"],
                **info,
            }
    audit["sensitivity"] = [
        {
            "choice": {"substitute": {"a": "b"}, **{k: v for k, v in s.items() if k != "claims"}},
            "claims": [
                {"common_rounds": {}, "variant_coverage": "", "variant_experiments": [], "unread": {}, **r}
                for r in s["claims"]
            ],
        }
        for s in audit["sensitivity"]
    ]
    return audit


#: made-up runs behind each setting's aggregates
CACHE_SEEDS = 3


def write_setting_tables(folder: Path, experiment: str, info: dict, seed: int = 0) -> None:
    """Each setting's curve and timing aggregates of ``experiment`` under ``folder`` (a results or a
    findings folder), written by the pipeline's own writers from made-up runs of ``info``'s horizons."""
    rng = np.random.default_rng(seed)
    for setting, setting_info in info.items():
        t = np.arange(1, setting_info.horizon + 1)
        runs = {
            setting: [
                pd.DataFrame(
                    {
                        "t": t,
                        "cumulative_regret": np.cumsum(rng.random(t.size)),
                        "step_seconds": rng.random(t.size),
                        "optimizer_seconds": rng.random(t.size),
                    }
                )
                for _ in range(CACHE_SEEDS)
            ]
        }
        records = {setting: [SimpleNamespace(seed=k, wall_seconds=1.0 + k) for k in range(CACHE_SEEDS)]}
        tables = {"regret.csv": curve_table(runs, info), "timing.csv": timing_table(runs, records, info)}
        for table, frame in tables.items():
            write_table(frame, ResultsFolder(str(folder)).setting_table(experiment, setting, table))


#: a made-up statement decided by computation (``made_up_run(..., computed=True)``)
COMPUTED = {
    "claim": {
        "id": "K1",
        "quote": "the function is locally smooth",
        "location": "Sec. 1",
        "objective": "garland",
        "check": "gls",
        "claimed": "holds",
        "resolutions": [{"kind": "exponential", "nu": 1.0, "rho": 0.5}],
        "max_depth": 3,
    },
    "verdict": "reproduced",
    "reason": "holds at depths 0..3",
    "table": {"depth": [0.0, 1.0, 2.0, 3.0], "optimal_cell_drop": [0.5, 0.25, 0.125, 0.0625]},
}


def made_up_design(experiments: dict) -> dict:
    """A made-up confirmatory design (an analysis plan's record) of ``experiments``' seeds 20-39."""
    return {
        "plan_file": "config/plans/made-up.yaml",
        "plan_sha256": "1" * 64,
        "commit": "0" * 40,
        "dirty": False,
        "config_sha256": "2" * 64,
        "claims_sha256": "3" * 64,
        "pilot_config": "config/config.yaml",
        "pilot_samples_sha256": "4" * 64,
        "pilot_seeds": {e: list(range(20)) for e in experiments},
        "confirmatory_seeds": {
            e: {s: list(range(20, 40)) for s in x["settings"]} for e, x in experiments.items()
        },
        "underpowered": [],
    }


def made_up_run(tmp_path: Path, *, confirmatory: bool = False, computed: bool = False) -> tuple[Path, Path]:
    """A finished run's results/ and figures/ as `make paper-local` leaves them (small, made up):
    the audit JSON, aggregates, figures, one batch file of the run store (written by the real run job,
    a few rounds; under ``tmp_path/store``), the audit's spec naming it, and the provenance record
    with the outputs' checksums. ``confirmatory``: the audit records a made-up analysis plan
    (:func:`made_up_design`); ``computed``: and a statement decided by computation (:data:`COMPUTED`)."""
    results, figures = tmp_path / "results", tmp_path / "figures"

    def settings(horizon: int) -> dict:  # as the audit's config summary records them
        seeds = list(range(20))
        return {
            "VHCT-rho0.75": {"algorithm": "VHCT", "horizon": horizon, "seeds": seeds},
            "BO": {"algorithm": "BO", "max_horizon": 50, "horizon": 50, "seeds": seeds},
        }

    cost = Comparison(
        "mnist",
        "BO",
        "VHCT-rho0.75",
        round=50,
        horizon=100,
        n_a=20,
        n_b=20,
        mean_a=0.35,
        mean_b=0.05,
        effect=7.0,
        effect_name="ratio of means",
        p_claimed=0.9,
        p_refuted=0.001,
        p_refuted_holm=0.002,
        verdict="not reproduced",
        total_a=2.5,
        total_b=2.25,
        reason="BO vs VHCT-rho0.75 at t = 50 of 100: ratio of means 7; mean_a < 10 mean_b",
    )
    audit = {
        "format": AUDIT_FORMAT,
        "reading_flips": [
            {"statement": "S", "readings": {"C1": "reproduced", "C3": "not reproduced"}, "flips": True}
        ],
        "context": {
            "experiments": {
                "garland": {
                    "objective": "garland",
                    "objective_params": {},
                    "noise": 0.05,
                    "horizon": 5000,
                    "seeds": list(range(20)),
                    "settings": settings(5000),
                },
                "mnist": {
                    "objective": "mnist",
                    "objective_params": {
                        "mode": "test-split",
                        "n_train": 2000,
                        "n_valid": 1000,
                        "subset_seed": 0,
                    },
                    "noise": 0.05,
                    "horizon": 100,
                    "seeds": list(range(20)),
                    "settings": settings(100),
                },
            }
        },
        "claims": [
            {
                "id": "C1",
                "reading_of": "S",
                "quote": "VHCT is fastest",
                "note": "read as the lowest final regret",
                "location": "Sec. 5",
                "verdict": "reproduced",
                "coverage": "garland, mnist",
                "reason": "VHCT below BO",
                "sensitivity": [{"choice": "osc-refresh", "verdict": "inconclusive", "flips": True}],
                "experiments": [
                    {"experiment": "garland", "verdict": "reproduced", "reason": "vs BO: p = 0.01"},
                    {"experiment": "mnist", "verdict": "reproduced", "reason": "vs BO: p = 0.02"},
                ],
            },
            {
                "id": "C2",
                "quote": "VHCT and HCT alike",
                "location": "Fig. 3",
                "verdict": "inconclusive",
                "coverage": "garland",
                "reason": "p = 0.2",
                "sensitivity": [],
                "experiments": [],
            },
            {
                "id": "C3",
                "reading_of": "S",
                "quote": "BO is expensive",
                "location": "App.",
                "verdict": "not reproduced",
                "statistic": "optimizer_seconds_per_round",
                "target": "BO",
                "alpha": 0.05,
                "coverage": "mnist",
                "reason": "mnist: " + cost.reason,
                "sensitivity": [],
                "experiments": [
                    {
                        "experiment": "mnist",
                        "verdict": "not reproduced",
                        "reason": cost.reason,
                        "comparisons": [cost.to_json()],
                    }
                ],
            },
        ],
        "flipped_claims": ["C1"],
        "sensitivity": [
            {
                "id": "osc-refresh",
                "choice": "when U is refreshed",
                "default": "doubling",
                "variant": "current",
                "claims": [
                    {
                        "claim": "C1",
                        "default_verdict": "reproduced",
                        "variant_verdict": "inconclusive",
                        "flips": True,
                        "variant_reason": "p = 0.1",
                    }
                ],
            }
        ],
        "discrepancies": [
            {"id": "D1", "where": "App.", "paper": "tau", "issue": "typo", "resolution": "fixed"}
        ],
    }
    for claim in audit["claims"]:
        claim["min_seeds"] = 20  # the claims' minimum: the 20 seeds below are the paper's scale
    audit = complete(audit)  # every field the audit's records require
    if confirmatory:
        audit["context"]["design"] = made_up_design(audit["context"]["experiments"])
    if computed:
        audit["computed"] = [COMPUTED]
    config = provenance.config_record([REPO / "config" / "paper-local.yaml"])
    config["figures"] = ["fig3a_garland", "fig3c_mnist", "audit_forest", "audit_summary"]
    started = datetime.now(UTC) - timedelta(seconds=3600)
    run = provenance.run_id(started)
    audit["context"]["configfiles"] = config["config_files"]
    audit["context"]["run_id"] = run  # as the audit job records $VHCT_RUN_ID
    results.mkdir(parents=True)
    folder = ResultsFolder(str(results))
    Path(folder.audit_json).write_text(json.dumps(audit))
    verdict_table(parse_audit(audit)).to_csv(folder.verdicts, index=False)  # the audit's
    for name, exp in audit["context"]["experiments"].items():
        final = pd.DataFrame(
            {
                "setting": ["VHCT-rho0.75", "BO"],
                "algorithm": ["VHCT", "BO"],
                "label": ["VHCT, rho=0.75", "BO"],
                "horizon": [exp["horizon"], 50],
                "n_seeds": [20, 20],
                "final_mean": [12.5, 3.25],
                "final_std": [1.5, 2.0],
            }
        )
        # the columns the findings do not print, as the aggregate job writes them
        final = final.reindex(columns=FINAL_COLUMNS, fill_value=0.5)
        Path(folder.aggregate(name, FINAL_TABLE)).parent.mkdir(parents=True)
        final.to_csv(folder.aggregate(name, FINAL_TABLE), index=False)
        timing = pd.DataFrame(
            {
                "setting": ["VHCT-rho0.75", "BO"],
                "algorithm": ["VHCT", "BO"],
                "seed": [0, 0],
                "rounds": [exp["horizon"], 50],
                "wall_seconds": [0.5, 25.0],
            }
        )
        timing = timing.reindex(columns=TIMING_COLUMNS, fill_value=0.25)
        timing.to_csv(folder.aggregate(name, TIMING_TABLE), index=False)
    for name, info in parse_audit(audit).context.experiments.items():
        write_setting_tables(results, name, info.settings)
    figures.mkdir(parents=True)
    # tiny_regret: another config's
    for name in ("fig3a_garland", "fig3c_mnist", "audit_forest", "audit_summary", "tiny_regret"):
        (figures / f"{name}.png").write_bytes(b"\x89PNG" + name.encode())
    spec = run_spec("VHCT", "garland", SIDECAR_RUN_ROUNDS, 0, params={"rho": 0.75}, setting="VHCT-rho0.75")
    job = RunJob(runs=[spec], source=run_source("VHCT"), versions=package_versions(), data={})
    batch = job.path(str(tmp_path / "store"))
    run_job(job, batch)
    run_paths = {"garland": {"VHCT-rho0.75": [str(batch)]}}
    audit_job = AuditJob(config={}, configfiles={}, plan=None, run_paths=run_paths, final_paths={}, source={})
    write_spec(folder.spec("audit", "audit"), audit_job)
    # the recorder's record, written when the command ends: the outputs' checksums as it left them
    outputs = provenance.output_hashes(results, figures, config["figures"])
    prov = provenance.record(
        ["snakemake", "--configfile", "config/paper-local.yaml"], started, 3725.0, config, run, outputs
    )
    Path(folder.provenance).write_text(prov.json_text())
    return results, figures


#: a made-up peak memory of a run (conftest's ``curved_root`` records it in the run's provenance)
PEAK_MB = 1234.5
#: what a checkout needs besides src/ and its findings to build the article
CHECKOUT_FILES = ("CITATION.cff", "config")


def made_up_checkout(tmp_path: Path, **run) -> Path:
    """A checkout in ``tmp_path/checkout`` (the citation record, the configs; no results/, no git) whose
    ``docs/findings`` is :func:`made_up_run` (``run``: its options) shipped as `make findings` ships it."""
    from vhct.reporting import ship

    root = tmp_path / "checkout"
    for name in CHECKOUT_FILES:
        src, dst = REPO / name, root / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    results, figures = made_up_run(tmp_path / "run", **run)
    ship.ship(results, figures, root / "docs", readme=None)
    return root


def with_curves(findings_dir: Path, checkout: Path, figures=None) -> None:
    """Give a findings folder the curves of ``figures`` (default: every regret figure the article
    finds in it), written by the pipeline's own writers, as a run of their settings would have: a
    setting the audit lacks joins its context (the run's config's info) and its final aggregate
    (made-up regret); then every file is recorded as the run's (:func:`support.reseal`)."""
    from support import reseal

    from vhct.article.record import collect
    from vhct.article.sources import read_sources

    sources = read_sources(findings_dir, checkout)
    cfg = sources.config()
    audit_path = findings_dir / AUDIT_JSON
    audit = json.loads(audit_path.read_text(encoding="utf-8"))
    for figure in figures if figures is not None else collect(sources, "results").figures:
        for experiment, by_setting in figure.curves.items():
            context = audit["context"]["experiments"][experiment]["settings"]
            config = cfg.experiment_info(experiment).settings
            joined = {s: config[s] for s in by_setting if s not in context}
            context.update({s: info.model_dump(mode="json") for s, info in joined.items()})
            final_path = findings_dir / "aggregates" / experiment / "final.csv"
            final = pd.read_csv(final_path)
            rows = pd.DataFrame(
                {
                    "setting": list(joined),
                    "algorithm": [i.algorithm for i in joined.values()],
                    "label": [i.label for i in joined.values()],
                    "horizon": [i.horizon for i in joined.values()],
                    "n_seeds": [len(i.seeds) for i in joined.values()],
                }
            ).reindex(columns=FINAL_COLUMNS, fill_value=1.0)
            pd.concat([final, rows]).to_csv(final_path, index=False)
            ran = sources.audit.context.experiments[experiment].settings
            write_setting_tables(findings_dir, experiment, {s: ran.get(s, config[s]) for s in by_setting})
    audit_path.write_text(json.dumps(audit), encoding="utf-8")
    reseal(findings_dir)
