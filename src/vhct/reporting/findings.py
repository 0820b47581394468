"""The replication's findings document, ``docs/findings.md``, rendered from the shipped files.

:func:`render` writes the document from the files under ``docs/findings/`` (the audit's JSON,
the aggregates, the run's provenance record) and ``docs/figures/`` alone, so the document is
never typed by hand and a test can check that it is what the shipped files give. Shipping a run
into ``docs/`` (its checks, the all-or-nothing swap, the README's findings block, the command
line of ``make findings``) is ``vhct.reporting.ship``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from vhct.reporting.audit.checks import Comparison
from vhct.reporting.audit.evaluate import AUDIT_FORMAT
from vhct.reporting.audit.render import (
    BEYOND_HEADER,
    beyond_not_evaluated,
    beyond_rows,
    common_note,
    format_number,
    markdown_table,
    md_cell,
)
from vhct.reporting.audit.verdicts import INCONCLUSIVE, NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED, VERDICTS

#: the shipped inputs of the document, relative to the docs directory
DATA_DIR = "findings"
AUDIT_JSON = "audit.json"
PROVENANCE_JSON = "provenance.json"
AGGREGATES = ("final.csv", "timing.csv")
FIGURES_DIR = "figures"
DOCUMENT = "findings.md"
#: the README's block that `vhct.reporting.ship` keeps equal to the shipped headline (between these markers)
README_BEGIN = "<!-- findings:begin (written by `make findings`) -->"
README_END = "<!-- findings:end -->"
#: reasons for what a local run does not do at the paper's scale, by fact
BO_REASON = (
    "GPyOpt's cost per round grows with the observations (with one warm-started GP fit per round, "
    "about 0.4 CPU-s per round at 100 observations and 1.3-1.7 s at 500; benchmarks/bo_cost.py, "
    "docs/performance.md), so its horizon is capped where the experiment's is longer. The figures' "
    "legends give BO's horizon."
)
CAP_REASON = (
    "Its `max_horizon` in the config (the setting's, or the experiment's `caps`) caps it; the figures' "
    "legends give its horizon."
)
SEEDS_REASON = (
    "Its `max_seeds` in the config (the setting's, or the experiment's `caps`) caps it (its cost per "
    "run); the figures' legends say so, and the "
    "audit compares it on the seeds it ran."
)
MNIST_REASON = (
    "The official MNIST training images are not in the offline data mirror this run used "
    "(data/README.md), so the network trains on part of the official test set and is validated on "
    "a disjoint part of it."
)


class FindingsError(RuntimeError):
    """A shipped input is missing or unreadable; the message names the file."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FindingsError(f"{path}: cannot read it as JSON ({exc})") from exc


def read_audit(path: Path) -> dict[str, Any]:
    """The audit JSON the document is rendered from; one written by another audit format is refused.

    The document's verdicts, summary and cost table are read from the audit's typed comparison
    records, so rendering an audit of an older format would mix two standards in one document.
    """
    audit = _read_json(path)
    if audit.get("format") != AUDIT_FORMAT:
        raise FindingsError(
            f"{path}: audit format {audit.get('format', 1)!r}, but this renderer needs format "
            f"{AUDIT_FORMAT}: re-run the audit (make paper-local) and ship its results (make findings)"
        )
    return audit


def audited_experiments(audit: Mapping[str, Any]) -> list[str]:
    """Experiments the audit read (its context's config summary), in config order."""
    return list(audit["context"]["experiments"])


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def headline(audit: Mapping[str, Any]) -> str:
    """One sentence: the verdict counts at the run's number of seeds, and the flips."""
    claims = audit["claims"]
    counts = {v: sum(c["verdict"] == v for c in claims) for v in VERDICTS}
    seeds = sorted({len(e["seeds"]) for e in audit["context"]["experiments"].values()})
    seed_text = " to ".join(map(str, (seeds[0], seeds[-1]) if len(seeds) > 1 else seeds))
    parts = [f"{counts[REPRODUCED]} reproduced", f"{counts[NOT_REPRODUCED]} not reproduced"]
    parts.append(f"{counts[INCONCLUSIVE]} inconclusive")
    if counts[NOT_EVALUATED]:
        parts.append(f"{counts[NOT_EVALUATED]} not evaluated")
    flips = len(audit.get("flipped_claims", []))
    return (
        f"At {seed_text} seeds per curve, of the paper's {_count(len(claims), 'audited claim')}: "
        f"{', '.join(parts[:-1])} and {parts[-1]}; {_count(flips, 'claim')} "
        f"{'flips' if flips == 1 else 'flip'} under an implementation choice the paper leaves open."
    )


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min {secs:02d} s ({seconds:.0f} s)"


def provenance_lines(prov: Mapping[str, Any]) -> list[str]:
    """The provenance block: commit, config, command, date, wall time, machine."""
    machine = prov["machine"]
    commit = prov["commit"] or "unknown"
    if prov.get("uncommitted_changes"):
        commit += " (with uncommitted changes)"
    rows = [
        ["commit", commit],
        ["config", ", ".join(prov["config_files"]) or "-"],
        ["command", f"`{prov['command']}`"],
        ["started (UTC)", prov["started_utc"]],
        ["wall time", _duration(prov["wall_seconds"])],
        [
            "machine",
            f"{machine['cpus']} CPUs ({machine['cpu_model']}), {machine['system']}, "
            f"Python {machine['python']}",
        ],
    ]
    return markdown_table(["", ""], rows)


def scale_lines(audit: Mapping[str, Any]) -> list[str]:
    """What this run did not do at the paper's full scale, and why (from the audited config)."""
    experiments = audit["context"]["experiments"]
    capped: dict[tuple[str, int, str | None], list[str]] = {}
    for name, exp in experiments.items():
        for setting, info in exp["settings"].items():
            if "max_horizon" in info and info["max_horizon"] < exp["horizon"]:
                key = (setting, info["max_horizon"], info.get("algorithm"))
                capped.setdefault(key, []).append(f"{name} (n = {exp['horizon']})")
    lines = []
    for (setting, cap, algorithm), where in capped.items():
        # GPyOpt's cost explains BO's cap only; another capped setting gives its config key
        reason = BO_REASON if algorithm == "BO" else CAP_REASON
        lines.append(f"- **{setting} stops at t = {cap} rounds** in {', '.join(where)}. {reason}")
    fewer: dict[tuple[str, int], list[str]] = {}
    for name, exp in experiments.items():
        for setting, info in exp["settings"].items():
            if "max_seeds" in info and info["max_seeds"] < len(exp["seeds"]):
                fewer.setdefault((setting, info["max_seeds"]), []).append(name)
    for (setting, count), where in fewer.items():
        lines.append(f"- **{setting} runs {count} seeds**, not all, in {', '.join(where)}. {SEEDS_REASON}")
    for name, exp in experiments.items():
        params = exp.get("objective_params") or {}
        if params.get("mode") == "test-split":
            lines.append(
                f"- **{name} runs in test-split mode**: {params.get('n_train')} training and "
                f"{params.get('n_valid')} validation images, n = {exp['horizon']} rounds. {MNIST_REASON}"
            )
    return (lines or ["- Nothing: every experiment ran at the configured paper scale."]) + [""]


def verdict_lines(audit: Mapping[str, Any]) -> list[str]:
    """Every claim's verdict, its reading under the variants, where it was evaluated and why."""
    rows = []
    for c in audit["claims"]:
        variants = "; ".join(
            f"{s['choice']}: {s['verdict']}{' (flips)' if s['flips'] else ''}"
            for s in c.get("sensitivity", [])
        )
        rows.append(
            [c["id"], c["location"], f"**{c['verdict']}**", c["coverage"], c["reason"], variants or "-"]
        )
    return markdown_table(
        ["claim", "where in the paper", "verdict", "evaluated on", "why", "under the variants"], rows
    )


def reading_lines(audit: Mapping[str, Any]) -> list[str]:
    """Per claim: how the audit reads it, and its verdict on each experiment with the reason."""
    lines: list[str] = []
    for c in audit["claims"]:
        lines.append(f"- **{c['id']}** ({c['verdict']}): {md_cell(c.get('note') or c['quote'])}")
        for e in c.get("experiments", []):
            lines.append(f"  - {e['experiment']}: {e['verdict']} ({md_cell(e['reason'])})")
    return lines + [""]


def sensitivity_lines(audit: Mapping[str, Any]) -> list[str]:
    """Per implementation choice the paper leaves open: the claims whose verdict it changes."""
    lines: list[str] = []
    for choice in audit.get("sensitivity", []):
        flipped = [r for r in choice["claims"] if r["flips"]]
        same = [r["claim"] for r in choice["claims"] if not r["flips"]]
        lines.append(
            f"- **{choice['id']}** ({choice['choice']}): default {choice['default']}; "
            f"variant {choice['variant']}."
        )
        for r in flipped:
            lines.append(
                f"  - {r['claim']} flips: {r['default_verdict']}{common_note(r.get('common_rounds'))} -> "
                f"{r['variant_verdict']} "
                f"({md_cell(r['variant_reason'])})"
            )
        if same:
            lines.append(f"  - unchanged: {', '.join(same)}")
    return (lines or ["- The run evaluated no variant settings."]) + [""]


def discrepancy_lines(audit: Mapping[str, Any]) -> list[str]:
    rows = [[d["id"], d["where"], d["paper"], d["issue"], d["resolution"]] for d in audit["discrepancies"]]
    return markdown_table(["id", "where", "the paper", "the problem", "what this project does"], rows)


def _claims_with(audit: Mapping[str, Any], verdict: str) -> list[Mapping[str, Any]]:
    return [c for c in audit["claims"] if c["verdict"] == verdict]


def summary_lines(audit: Mapping[str, Any]) -> list[str]:
    """The opening summary, in the manner of a reproducibility report, every sentence from the audit JSON:
    scope, what reproduced, what did not and why, what stayed open, readings that disagree."""
    experiments = audit["context"]["experiments"]
    seeds = sorted({len(e["seeds"]) for e in experiments.values()})
    horizons = sorted({e["horizon"] for e in experiments.values()})
    seed_text = " to ".join(map(str, (seeds[0], seeds[-1]) if len(seeds) > 1 else seeds)) if seeds else "0"
    horizon_text = " to ".join(map(str, (horizons[0], horizons[-1]) if len(horizons) > 1 else horizons))
    lines = [
        f"- **Scope.** {_count(len(audit['claims']), 'claim')} of the paper, each quoted and located, "
        f"checked on {_count(len(experiments), 'experiment')} ({', '.join(experiments)}) at "
        f"{seed_text} seeds and horizons of {horizon_text or '-'} rounds; each verdict from two "
        f"one-sided tests on the mean over seeds at alpha = {_alpha(audit)}, refutations "
        "Holm-corrected per claim.",
    ]
    for verdict, title in ((REPRODUCED, "Reproduced"), (NOT_REPRODUCED, "Not reproduced")):
        claims = _claims_with(audit, verdict)
        if not claims:
            lines.append(f"- **{title}:** none.")
            continue
        lines.append(f"- **{title}** ({len(claims)}):")
        for c in claims:
            why = "" if verdict == REPRODUCED else f": {md_cell(c['reason'])}"
            lines.append(f"  - {c['id']} ({c['location']}){why}")
    open_claims = _claims_with(audit, INCONCLUSIVE)
    if open_claims:
        lines.append(
            f"- **Inconclusive** ({len(open_claims)}), neither the claim nor its refutation significant: "
            + ", ".join(c["id"] for c in open_claims)
            + "."
        )
    unrun = _claims_with(audit, NOT_EVALUATED)
    if unrun:
        lines.append(
            "- **Not evaluated**, the run has no experiment or setting they need: "
            + "; ".join(f"{c['id']} ({md_cell(c['reason'])})" for c in unrun)
            + "."
        )
    for flip in audit.get("reading_flips", []):
        readings = ", ".join(f"{k}: {v}" for k, v in flip["readings"].items())
        if flip["flips"]:
            lines.append(f"- **Two readings disagree** on {flip['statement']}: {readings}.")
    early = sorted(
        {
            Comparison.of(comp).label
            for c in audit["claims"]
            for e in c["experiments"]
            for comp in e.get("comparisons", [])
            if Comparison.of(comp).early
        }
    )
    if early:
        lines.append(
            f"- **Read before the horizon** ({_count(len(early), 'comparison')}, each labelled with its "
            "round, in separate checks from the claims about the final round): " + "; ".join(early) + "."
        )
    return lines + [""]


def _alpha(audit: Mapping[str, Any]) -> str:
    alphas = sorted({c.get("alpha") for c in audit["claims"] if c.get("alpha") is not None})
    return ", ".join(format_number(a) for a in alphas) or "-"


def cost_lines(audit: Mapping[str, Any]) -> list[str]:
    """Seconds per evaluation from the audit's cost comparisons: one definition for the claim and the table.

    Every row is a comparison of the cost claim: mean wall seconds per round (ask + evaluate +
    tell) of both settings over the same rounds 1..t, and their ratio.
    """
    rows, targets = [], []
    for c in audit["claims"]:
        if c.get("statistic") != "seconds_per_round":
            continue
        targets.append(c.get("target", "target"))
        for e in c["experiments"]:
            for item in e.get("comparisons", []):
                comp = Comparison.of(item)
                if comp.round is None:
                    continue
                rows.append(
                    [
                        e["experiment"],
                        comp.b,
                        f"1..{comp.round} of {comp.horizon}",
                        format_number(comp.mean_a),
                        format_number(comp.mean_b),
                        format_number(comp.effect),
                        comp.verdict,
                    ]
                )
    if not rows:
        return ["The audit made no cost comparison.", ""]
    header = [
        "experiment",
        "setting",
        "rounds",
        f"{rows and 'BO'} s/eval",
        "setting s/eval",
        "ratio",
        "verdict",
    ]
    return markdown_table(header, rows)


#: the figure of the baselines (kind regret_cost) the "Beyond the paper" section links when shipped
BEYOND_FIGURE = "beyond_baselines"


def beyond_lines(audit: Mapping[str, Any], figures: Sequence[Path]) -> list[str]:
    """The "Beyond the paper" section from the audit's ``beyond`` part (one line when it has none)."""
    beyond = audit.get("beyond")
    if beyond is None:
        return ["No question beyond the paper was evaluated: the run's configuration runs no baseline.", ""]
    lines = [
        "Questions the paper did not ask (`config/beyond.yaml`): VHCT and HCT against random search, "
        "Optuna's TPE, CMA-ES and GP sampler and GPyOpt's BO, with the audit's tests, kept apart from the "
        "verdicts on the paper's claims. " + " ".join(beyond["rules"]["question"].split()) + " A round "
        "before the experiment's last (t = X of N) is a capped setting's last round. Regret on real data "
        "is against the best value observed in any run; cost is mean wall seconds per round over the "
        "compared rounds.",
        "",
        *markdown_table(BEYOND_HEADER, beyond_rows(beyond)),
    ]
    missing = beyond_not_evaluated(beyond)
    if missing:
        lines += [f"Not evaluated: {len(missing)} question-experiment pairs (the audit lists why).", ""]
    names = {f.stem: f for f in figures}
    if BEYOND_FIGURE in names:
        lines += [f"Figure: [{BEYOND_FIGURE}]({FIGURES_DIR}/{names[BEYOND_FIGURE].name}).", ""]
    return lines


def regret_lines(aggregates: Mapping[str, Mapping[str, pd.DataFrame]]) -> list[str]:
    """Final cumulative regret of every setting, one collapsed table per experiment.

    Settings at the experiment's horizon come first, best first; a setting stopped earlier (BO)
    follows, since its R_n covers fewer rounds and is not comparable by size.
    """
    lines: list[str] = []
    for name, tables in aggregates.items():
        final = tables["final.csv"].sort_values(
            ["horizon", "final_mean"], ascending=[False, True], kind="stable"
        )
        rows = [
            [
                r.setting,
                r.horizon,
                r.n_seeds,
                f"{format_number(r.final_mean)} ± {format_number(r.final_std)}",
                format_number(r.final_mean / r.horizon),
            ]
            for r in final.itertuples()
        ]
        lines += [f"<details><summary>{name}</summary>", ""]
        lines += markdown_table(["setting", "n", "seeds", "R_n (mean ± sd)", "R_n / n"], rows)
        lines += ["</details>", ""]
    return lines


def render(docs: Path | str) -> str:
    """``docs/findings.md`` from the shipped files under ``docs/findings`` and ``docs/figures``."""
    docs = Path(docs)
    data = docs / DATA_DIR
    audit = read_audit(data / AUDIT_JSON)
    prov = _read_json(data / PROVENANCE_JSON)
    aggregates = {}
    for name in audited_experiments(audit):
        tables = {}
        for file in AGGREGATES:
            path = data / "aggregates" / name / file
            try:
                tables[file] = pd.read_csv(path)
            except (OSError, ValueError) as exc:
                raise FindingsError(f"{path}: cannot read the aggregate ({exc})") from exc
        aggregates[name] = tables
    figures = sorted((docs / FIGURES_DIR).glob("*.png"))
    lines = [
        "# What the replication found",
        "",
        "<!-- Generated by `make findings` (python -m vhct.reporting.findings) from the files under "
        "docs/findings/ and docs/figures/; do not edit by hand. -->",
        "",
        f"**{headline(audit)}**",
        "",
        "## Summary",
        "",
        *summary_lines(audit),
        "The audit checks each claim of the paper on the runs of this pipeline: one number per seed, two "
        "one-sided tests on the mean over seeds (the claimed region and the refuting one, each with its "
        "margin) and a verdict; the rules are data in `config/claims.yaml` and explained, with their "
        "calibration, in [docs/audit.md](audit.md). *Inconclusive* means too few seeds or neither test "
        "significant, not evidence against the claim. The full audit, with every comparison's numbers, is "
        "in [findings/audit.json](findings/audit.json) and, rendered, in the run's `results/audit.md`.",
        "",
        "## Provenance",
        "",
        *provenance_lines(prov),
        "## Not at the paper's full scale",
        "",
        *scale_lines(audit),
        "## Verdicts",
        "",
        *verdict_lines(audit),
        "### How each claim is read, and its verdict per experiment",
        "",
        "A claim's verdict combines its experiments': not reproduced if any is, reproduced if every "
        'evaluated one is (or a majority, for claims made "in general"), else inconclusive. A setting that '
        "stopped early (BO) is left out of the claims about the final round; the checks at its own last "
        "round say which round in every reason.",
        "",
        *reading_lines(audit),
        "## Sensitivity to implementation choices the paper leaves open",
        "",
        "Each choice runs as extra settings; every claim that reads a substituted setting is evaluated "
        "again with the variant in its place. A claim that flips is not decided by this project's default.",
        "",
        *sensitivity_lines(audit),
        "## Discrepancies in the paper and in the authors' library",
        "",
        *discrepancy_lines(audit),
        "## Cost: seconds per evaluation",
        "",
        "The cost the bo-cost claim tests, and only that: mean wall seconds per round (the optimizer's work "
        "and the objective's evaluation together) of BO and of each other setting over the same rounds, "
        "1 to BO's last round, averaged over seeds.",
        "",
        *cost_lines(audit),
        "## Final cumulative regret",
        "",
        "Against the exact f* of the synthetic objectives, against a score of 1 for Landmine and MNIST. "
        "Settings at the experiment's horizon first, best first; a setting stopped earlier (BO) last, "
        "its R_n over its own rounds.",
        "",
        *regret_lines(aggregates),
        "## Beyond the paper",
        "",
        *beyond_lines(audit, figures),
        "## Figures",
        "",
    ]
    for figure in figures:
        lines += [f"### {figure.stem}", "", f"![{figure.stem}]({FIGURES_DIR}/{figure.name})", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
