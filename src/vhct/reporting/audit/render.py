"""The audit as Markdown, HTML and JSON: one document model, two renderings."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.files import atomic_paths, json_default
from vhct.reporting.audit.checks import Comparison
from vhct.reporting.audit.verdicts import INCONCLUSIVE, NOT_EVALUATED, NOT_REPRODUCED, REPRODUCED

#: significant digits of the numbers in the Markdown/HTML tables
DIGITS = 4


def format_number(value: Any) -> str:
    """A number for the tables: DIGITS significant digits, nan/inf spelled out, None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return f"{value:.{DIGITS}g}"
    return str(value)


def comparison_row(item: Comparison | Mapping[str, Any]) -> list[str]:
    """One table row of a comparison record: label, numbers, the two tests, effect, verdict, why."""
    c = Comparison.of(item)
    if c.b == "-":
        numbers = f"{format_number(c.mean_a)} ± {format_number(c.std_a)} (n={c.n_a})"
    elif c.n_a:
        numbers = (
            f"{format_number(c.mean_a)} ± {format_number(c.std_a)} (n={c.n_a}) vs "
            f"{format_number(c.mean_b)} ± {format_number(c.std_b)} (n={c.n_b})"
        )
    else:
        numbers = ""
    tests = (
        f"{c.claimed}: {format_number(c.p_claimed)}; {c.refuted}: {format_number(c.p_refuted)} "
        f"(Holm {format_number(c.p_refuted_holm)})"
        if c.p_claimed is not None
        else ""
    )
    effect = f"{c.effect_name} {format_number(c.effect)}" if c.effect_name and c.n_a else ""
    return [c.label, numbers, tests, effect, c.verdict, c.reason]


COMPARISON_HEADER = [
    "comparison",
    "numbers (mean ± sd)",
    "one-sided p: claimed; refuting",
    "effect",
    "verdict",
    "why",
]


def document(audit: Mapping[str, Any]) -> list[tuple]:
    """The audit as blocks ('h', level, text) / ('p', text) / ('quote', text) / ('table', header, rows)."""
    ctx = audit["context"]
    blocks: list[tuple] = [("h", 1, "Audit of the paper's claims")]
    blocks.append(
        (
            "p",
            "Each claim of the paper (quoted and located) is checked on the runs of this pipeline: "
            "one number per run (seed), two one-sided tests on the mean over seeds (the claimed region "
            "and the refuting one, each with its margin) and a verdict (reproduced, not reproduced, "
            "inconclusive, not evaluated). A claim is judged on the experiments this configuration runs "
            "(its 'evaluated on'); inconclusive means too few seeds or neither test significant, not "
            "evidence against the claim. A comparison read before the experiment's last round says so "
            '("at t = 50 of 500"). Statistical footing: ' + audit["rules"]["footing"],
        )
    )
    blocks.append(("h", 2, "Configuration"))
    rows = [
        ["config files", ", ".join(ctx.get("configfiles", [])) or "-"],
        ["claims file", f"{ctx.get('claims_file', '-')} (sha256 {ctx.get('claims_sha256', '-')[:16]})"],
    ]
    blocks.append(("table", ["item", "value"], rows))
    exp_rows = []
    for name, e in ctx.get("experiments", {}).items():
        settings = ", ".join(
            f"{s}{' (max ' + str(v['max_horizon']) + ' rounds)' if 'max_horizon' in v else ''}"
            for s, v in e["settings"].items()
        )
        params = f" {e['objective_params']}" if e["objective_params"] else ""
        exp_rows.append(
            [
                name,
                f"{e['objective']}{params}",
                format_number(e["noise"]),
                str(e["horizon"]),
                str(len(e["seeds"])),
                settings,
            ]
        )
    if exp_rows:
        blocks.append(
            (
                "table",
                ["experiment", "objective", "noise half-width", "horizon", "seeds", "settings"],
                exp_rows,
            )
        )
    blocks.append(("h", 2, "Summary"))
    counts = ", ".join(f"{v}: {n}" for v, n in audit["summary"].items())
    blocks.append(("p", counts))
    if audit.get("sensitivity"):
        flipped = audit.get("flipped_claims", [])
        blocks.append(
            (
                "p",
                "Verdicts that flip under an implementation choice the paper leaves open: "
                + (", ".join(flipped) if flipped else "none")
                + " (see 'Sensitivity to implementation choices').",
            )
        )
    for flip in audit.get("reading_flips", []):
        readings = ", ".join(f"{k}: {v}" for k, v in flip["readings"].items())
        state = "the readings disagree (a flip)" if flip["flips"] else "the readings agree"
        blocks.append(("p", f"Statement {flip['statement']} under two readings: {readings}; {state}."))
    blocks.append(
        (
            "table",
            ["claim", "location", "kind", "verdict", "under the variants", "evaluated on", "why"],
            [
                [
                    c["id"],
                    c["location"],
                    c["kind"],
                    c["verdict"],
                    _variants_text(c),
                    c["coverage"],
                    c["reason"],
                ]
                for c in audit["claims"]
            ],
        )
    )
    blocks.append(("h", 2, "Claims"))
    for c in audit["claims"]:
        blocks.append(("h", 3, f"{c['id']}: {c['verdict']}"))
        blocks.append(("p", f"Evaluated on: {c['coverage']}."))
        blocks.append(("quote", c["quote"]))
        blocks.append(("p", f"Location: {c['location']}."))
        if c.get("note"):
            blocks.append(("p", f"Reading: {c['note']}"))
        if c.get("sensitivity"):
            blocks.append(("p", f"Under the implementation choices' variants: {_variants_text(c)}."))
        thresholds = ", ".join(f"{k} = {v}" for k, v in c["thresholds"].items())
        blocks.append(
            (
                "p",
                f"Check: {c['kind']} on {c['statistic']} at round {c['round']}, alpha = {c['alpha']}, "
                f"at least {c['min_seeds']} seeds, require {c['require']}; {thresholds}. "
                f"Rule: {audit['rules'][c['kind']]}",
            )
        )
        rows = []
        for e in c["experiments"]:
            if not e["comparisons"]:
                rows.append([e["experiment"], "", "", "", "", e["verdict"], e["reason"]])
            for comp in e["comparisons"]:
                rows.append([e["experiment"], *comparison_row(comp)])
        blocks.append(("table", ["experiment", *COMPARISON_HEADER], rows))
    blocks += _sensitivity_blocks(audit.get("sensitivity", []))
    blocks.append(("h", 2, "Discrepancies in the paper and in the authors' library"))
    blocks.append(
        (
            "table",
            ["id", "where", "the paper", "the problem", "what this project does"],
            [[d["id"], d["where"], d["paper"], d["issue"], d["resolution"]] for d in audit["discrepancies"]],
        )
    )
    blocks += _beyond_blocks(audit)
    return blocks


BEYOND_HEADER = [
    "question", "experiment", "round", "mean regret A", "mean regret B", "effect (ratio of means A/B)",
    "p (Holm)", "answer", "seconds per round A / B",
]  # fmt: skip


def beyond_round(c: Comparison) -> str:
    """Where a question's comparison was read: ``t = 12 of 30`` when early, else ``final (t = 30)``."""
    return f"t = {c.round} of {c.horizon}" if c.early else f"final (t = {c.round})"


def beyond_rows(beyond: Mapping[str, Any]) -> list[list[str]]:
    """One row per question and evaluated experiment of the audit's ``beyond`` part (audit and findings).

    The p-value is the Holm-adjusted one of the direction with the smaller p (the one an answer
    other than "no significant difference" rests on).
    """
    rows = []
    for q in beyond["questions"]:
        for e in q["experiments"]:
            if e["comparison"] is None or e["verdict"] == NOT_EVALUATED:
                continue
            c = Comparison.of(e["comparison"])
            tested = [p for p in (c.p_claimed_holm, c.p_refuted_holm) if p is not None]
            cost = e.get("cost")
            rows.append(
                [
                    q["question"], e["experiment"], beyond_round(c),
                    f"{c.a}: {format_number(c.mean_a)} (n={c.n_a})",
                    f"{c.b}: {format_number(c.mean_b)} (n={c.n_b})",
                    format_number(c.effect), format_number(min(tested)) if tested else "",
                    e["verdict"],
                    f"{format_number(cost['a'])} / {format_number(cost['b'])}" if cost else "",
                ]
            )  # fmt: skip
    return rows


def beyond_not_evaluated(beyond: Mapping[str, Any]) -> list[str]:
    """``question on experiment: why`` for every experiment a question could not be evaluated on."""
    return [
        f"{q['id']} on {e['experiment']}: {e['reason']}"
        for q in beyond["questions"]
        for e in q["experiments"]
        if e["verdict"] == NOT_EVALUATED
    ]


def _beyond_blocks(audit: Mapping[str, Any]) -> list[tuple]:
    """The audit's section on the questions beyond the paper (or one line saying there are none)."""
    blocks: list[tuple] = [("h", 2, "Beyond the paper")]
    beyond = audit.get("beyond")
    if beyond is None:
        return blocks + [
            ("p", "No question beyond the paper was evaluated: this configuration runs no baseline.")
        ]
    blocks.append(
        (
            "p",
            "Questions the paper did not ask (config/beyond.yaml), answered with the same tests and kept "
            "apart from the verdicts on the paper's claims. Rule: " + beyond["rules"]["question"],
        )
    )
    blocks.append(("table", BEYOND_HEADER, beyond_rows(beyond)))
    missing = beyond_not_evaluated(beyond)
    if missing:
        blocks.append(("p", "Not evaluated: " + "; ".join(missing) + "."))
    return blocks


def _variants_text(claim: Mapping[str, Any]) -> str:
    """The claim's verdict under each choice's variant, e.g. ``pct-schedule: inconclusive (flips)``."""
    parts = [
        f"{s['choice']}: {s['verdict']}{' (flips)' if s['flips'] else ''}"
        for s in claim.get("sensitivity", [])
    ]
    return "; ".join(parts) or "-"


def _sensitivity_blocks(sensitivity: Sequence[Mapping[str, Any]]) -> list[tuple]:
    """One table per implementation choice: both verdicts of every claim that reads its settings."""
    if not sensitivity:
        return []
    blocks: list[tuple] = [
        ("h", 2, "Sensitivity to implementation choices"),
        (
            "p",
            "Choices the paper leaves open are parameters with a default; the configuration also runs "
            "each variant as extra settings. Every claim that reads a substituted setting is evaluated "
            "again with the variant's settings in its place. A verdict flips when both readings were "
            "evaluated and disagree; such a claim is not decided by this project's default.",
        ),
    ]
    for choice in sensitivity:
        blocks.append(("h", 3, f"{choice['id']}: {choice['choice']}"))
        pairs = ", ".join(f"{a} -> {b}" for a, b in choice["substitute"].items())
        blocks.append(
            ("p", f"Default: {choice['default']}. Variant: {choice['variant']}. Settings: {pairs}.")
        )
        rows = [
            [
                r["claim"],
                r["default_verdict"] + common_note(r.get("common_rounds")),
                r["variant_verdict"],
                "yes" if r["flips"] else "no",
                r["variant_coverage"],
                r["variant_reason"],
            ]
            for r in choice["claims"]
        ]
        blocks.append(
            (
                "table",
                ["claim", "default", "variant", "flips", "variant evaluated on", "why (variant)"],
                rows or [["(no claim reads these settings)", "", "", "", "", ""]],
            )
        )
    return blocks


def md_cell(text: Any) -> str:
    """One Markdown table cell: on one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def render_markdown(audit: Mapping[str, Any]) -> str:
    """The audit as Markdown (readable on its own)."""
    lines: list[str] = []
    for block in document(audit):
        if block[0] == "h":
            lines += ["#" * block[1] + " " + block[2], ""]
        elif block[0] == "p":
            lines += [" ".join(block[1].split()), ""]
        elif block[0] == "quote":
            lines += ["> " + " ".join(block[1].split()), ""]
        else:
            lines += markdown_table(*block[1:])
    return "\n".join(lines)


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    """Lines of a Markdown table, then an empty line (cells on one line, pipes escaped)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md_cell(x) for x in row) + " |" for row in rows]
    return lines + [""]


VERDICT_COLORS = {
    REPRODUCED: "#d4edda",
    NOT_REPRODUCED: "#f8d7da",
    INCONCLUSIVE: "#fff3cd",
    NOT_EVALUATED: "#e2e3e5",
}


HTML_STYLE = (
    "body{font-family:sans-serif;margin:1.5em;max-width:1300px}"
    "table{border-collapse:collapse;margin:0.5em 0 1.2em;font-size:0.88em}"
    "td,th{border:1px solid #bbb;padding:3px 6px;vertical-align:top;text-align:left}"
    "th{background:#eee}blockquote{border-left:4px solid #999;margin:0.5em 0;padding:0.2em 0.8em;color:#333}"
)


def render_html(audit: Mapping[str, Any]) -> str:
    """The audit as a standalone HTML page (for the Snakemake report); verdict cells are coloured."""
    out = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Audit of the paper's claims</title>",
        f"<style>{HTML_STYLE}</style></head><body>",
    ]
    for block in document(audit):
        if block[0] == "h":
            out.append(f"<h{block[1]}>{html.escape(block[2])}</h{block[1]}>")
        elif block[0] == "p":
            out.append(f"<p>{html.escape(block[1])}</p>")
        elif block[0] == "quote":
            out.append(f"<blockquote>{html.escape(block[1])}</blockquote>")
        else:
            _, header, rows = block
            out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
            for row in rows:
                cells = []
                for x in row:
                    color = VERDICT_COLORS.get(str(x))
                    style = f" style='background:{color}'" if color else ""
                    cells.append(f"<td{style}>{html.escape(str(x))}</td>")
                out.append("<tr>" + "".join(cells) + "</tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_audit(
    audit: Mapping[str, Any], md_path: Path | str, json_path: Path | str, html_path: Path | str | None = None
) -> None:
    """Write the audit as Markdown, JSON (and HTML); infinities/nan are written as JSON strings."""

    def clean(x: Any) -> Any:
        if isinstance(x, Comparison):
            return clean(x.to_json())
        if isinstance(x, float) and not math.isfinite(x):
            return format_number(x)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [clean(v) for v in x]
        return x

    paths = [md_path, json_path] + ([html_path] if html_path is not None else [])
    with atomic_paths(*paths) as temps:
        temps[0].write_text(render_markdown(audit), encoding="utf-8")
        temps[1].write_text(json.dumps(clean(audit), indent=2, default=json_default) + "\n", encoding="utf-8")
        if html_path is not None:
            temps[2].write_text(render_html(audit), encoding="utf-8")


def common_note(rounds: dict[str, int] | None) -> str:
    """`` (read at t = 100 on landmine, ...)`` where the default was cut to its variant's rounds."""
    if not rounds:
        return ""
    return " (read at " + ", ".join(f"t = {t} on {e}" for e, t in sorted(rounds.items())) + ")"
