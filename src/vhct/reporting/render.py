"""The one renderer of the audit records: ``audit.md`` and ``audit.html``, ``docs/findings.md``, the
headline and the README's findings block. The prose is in the Jinja2 templates (``templates/``:
``audit.j2`` in either format through ``md.j2`` or ``html.j2``, ``findings.j2``, ``readme.j2``, and
``parts.j2`` what they share); the values they print come from the view (:mod:`vhct.reporting.view`),
this module only formats them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from vhct.durations import duration
from vhct.pipeline.figure_kinds import AUDIT_FIGURES
from vhct.pipeline.files import atomic_paths
from vhct.pipeline.provenance import Provenance
from vhct.reporting.audit.effects import effect_unit
from vhct.reporting.audit.records import Audit, Comparison, audit_json
from vhct.reporting.audit.verdicts import (
    INCONCLUSIVE,
    NOT_EVALUATED,
    NOT_REPRODUCED,
    READINGS_DISAGREE,
    REPRODUCED,
    estimate_text,
    statements,
)
from vhct.reporting.styles import tint, verdict_colour
from vhct.reporting.view import (  # noqa: F401 (re-exported: the values the templates print)
    View,
    beyond_rows,
    build_view,
    capitalize_first,
    claim_comparisons,
    computed_name,
    cost_rows,
    counts,
    decider,
    direction_sentence,
    early_labels,
    flipped_statements,
    format_number,
    margin_rows,
    mnist_subsets,
    regret_tables,
    scale_items,
    seeds_span,
    seeds_text,
    table_pair,
)

#: the audit's forest and summary figures, linked first in the findings
FOREST, SUMMARY = AUDIT_FIGURES
#: background colour of a verdict's cell in the HTML page: the verdicts' palette, tinted
VERDICT_COLORS = {
    v: tint(verdict_colour(v))
    for v in (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, NOT_EVALUATED, READINGS_DISAGREE)
}


def md_cell(text: Any) -> str:
    """One Markdown table cell: on one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def oneline(text: Any) -> str:
    """The text on one line (a block of template prose; HTML markup stays markup)."""
    joined = " ".join(str(text).split())
    return Markup(joined) if isinstance(text, Markup) else joined


def slug(text: str) -> str:
    """The anchor GitHub (and this module's HTML) gives a heading: lower case, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@dataclass(frozen=True)
class Link:
    """A table cell that links a heading of the same document."""

    text: str
    anchor: str


# ---------------------------------------------------------------- values the templates print


def references(comps: Iterable[Comparison]) -> list[str]:
    """The regret references of the comparisons, each once, in order."""
    return list(dict.fromkeys(c.reference for c in comps if c.reference))


def said_once(text: str, refs: Sequence[str]) -> str:
    """``text`` with every ``(reference)`` its comparisons appended taken out and the references
    said once at its end: a reason over four comparisons names their shared reference once."""
    found = [ref for ref in refs if f" ({ref})" in text]
    for ref in found:
        text = text.replace(f" ({ref})", "")
    return text + (f" ({'; '.join(found)})" if found else "")


def template_environment(autoescape: bool = False) -> Environment:
    """A new environment over the reporting templates (strict, trimmed, Markdown cells): the one
    builder every renderer of ``vhct/reporting/templates`` starts from, adding its own filters."""
    env = Environment(
        loader=PackageLoader("vhct.reporting", "templates"),
        undefined=StrictUndefined,
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = md_cell
    env.filters["computed_name"] = computed_name
    return env


def in_unit(value: float, c: Comparison) -> str:
    """A value in the units of ``c``'s effect as printed: a duration where they are a threshold of seconds."""
    return effect_unit(c.effect_name).text(value)


@cache
def _environment(autoescape: bool) -> Environment:
    """The audit's environment, HTML-escaping or not, with the filters and values its templates use."""
    env = template_environment(autoescape)
    env.filters.update(
        num=format_number,
        in_unit=in_unit,
        estimate=estimate_text,
        slug=slug,
        said_once=said_once,
        refs=references,
        oneline=oneline,
        capitalize_first=capitalize_first,
    )
    env.tests["link"] = lambda x: isinstance(x, Link)
    env.globals.update(
        Link=Link,
        decider=decider,
        table_pair=table_pair,
        counts=counts,
        seeds_text=seeds_text,
        seeds_span=seeds_span,
        statements=lambda audit: statements(audit.claims),
        flipped_statements=flipped_statements,
        direction_sentence=direction_sentence,
        margin_rows=margin_rows,
        READINGS_DISAGREE=READINGS_DISAGREE,
        early_labels=early_labels,
        comparisons=claim_comparisons,
        beyond_rows=beyond_rows,
        colors=VERDICT_COLORS,
        REPRODUCED=REPRODUCED,
        NOT_REPRODUCED=NOT_REPRODUCED,
        INCONCLUSIVE=INCONCLUSIVE,
        NOT_EVALUATED=NOT_EVALUATED,
    )
    return env


def _render(template: str, fmt: str, **values: Any) -> str:
    text = _environment(fmt == "html").get_template(template).render(fmt=f"{fmt}.j2", **values)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n") + "\n"


def render_markdown(audit: Audit) -> str:
    """``results/audit.md``: the audit as Markdown (readable on its own)."""
    return _render("audit.j2", "md", audit=audit)


def render_html(audit: Audit) -> str:
    """``results/audit.html``: the same document as a standalone page; verdict cells coloured."""
    return _render("audit.j2", "html", audit=audit)


def design_text(audit: Audit) -> str:
    """The audit's design in one plain paragraph (``parts.design``: the audit's and the findings')."""
    return _render("design.j2", "md", audit=audit).strip()


def headline(audit: Audit) -> str:
    """One sentence: the verdict counts at the run's number of seeds, and the flips (the README's)."""
    return _render("headline.j2", "md", audit=audit).strip()


def render_readme(audit: Audit, document: str) -> str:
    """The README's findings block (``readme.j2``): the headline and a link to ``document``; a run
    below the paper's scale says so first."""
    values = {"paper": not audit.below_paper(), "seeds": seeds_span(audit), "needed": audit.paper_seeds}
    return _render("readme.j2", "md", headline=headline(audit), document=document, **values).rstrip("\n")


def render_findings(
    audit: Audit,
    provenance: Provenance,
    aggregates: Mapping[str, Mapping[str, Any]],
    figures: Sequence[Path],
    figures_dir: str,
    verdicts_table: str | None = None,
    view: View | None = None,
    history: str = "",
) -> str:
    """``docs/findings.md`` from the shipped audit record, provenance, aggregates and figures
    (``verdicts_table``: the link to the shipped verdict table, None when none is shipped; ``view``:
    the audit's view, :func:`vhct.reporting.view.build_view`, built without the paper's scale when
    not given; ``history``: the section "Design history" in Markdown, ``vhct.reporting.history.render``,
    none when empty)."""
    names = {f.stem: f for f in figures}
    return _render(
        "findings.j2",
        "md",
        audit=audit,
        view=view if view is not None else build_view(audit),
        headline=headline(audit),
        prov=provenance,
        duration=duration(provenance.wall_seconds, finest="s", total=True),
        scale=scale_items(audit),
        costs=cost_rows(audit),
        regrets=regret_tables(aggregates),
        beyond=beyond_rows(audit),
        figures=[(f.stem, f"{figures_dir}/{f.name}") for f in figures],
        beyond_figure=names.get("beyond_baselines") and f"{figures_dir}/{names['beyond_baselines'].name}",
        forest_figure=names.get(FOREST) and f"{figures_dir}/{names[FOREST].name}",
        summary_figure=names.get(SUMMARY) and f"{figures_dir}/{names[SUMMARY].name}",
        verdicts_table=verdicts_table,
        history=history,
    )


#: the verdict table's columns (:func:`verdict_table`): one row per comparison of a reading of a statement
VERDICT_COLUMNS = (
    "statement",
    "statement_verdict",
    "reading",
    "reading_verdict",
    "reading_category",
    "experiment",
    "comparison",
    "effect_name",
    "effect",
    "ci_level",
    "ci_low",
    "ci_high",
    "comparison_verdict",
    "comparison_category",
)


def verdict_table(audit: Audit) -> pd.DataFrame:
    """The audit's verdicts as one table (``verdicts.csv`` beside ``audit.json``): a row per comparison of
    each reading of each statement, with its effect, interval and verdict beside its reading's and
    statement's verdicts; an experiment without comparisons, or a statement checked by computation,
    gets one row with its verdict and no effect."""
    rows: list[dict[str, Any]] = []
    for statement in statements(audit.claims):
        for reading in statement.readings:
            head = {
                "statement": statement.id,
                "statement_verdict": statement.verdict,
                "reading": reading.claim.id,
                "reading_verdict": reading.verdict,
                "reading_category": reading.category,
            }
            if not reading.experiments:
                rows.append(head)
            for exp in reading.experiments:
                if not exp.comparisons:
                    rows.append(
                        {
                            **head,
                            "experiment": exp.experiment,
                            "comparison_verdict": exp.verdict,
                            "comparison_category": exp.category,
                        }
                    )
                for c in exp.comparisons:
                    rows.append(
                        {
                            **head,
                            "experiment": exp.experiment,
                            "comparison": c.label,
                            "effect_name": c.effect_name,
                            "effect": c.effect,
                            "ci_level": c.ci_level,
                            "ci_low": c.ci_low,
                            "ci_high": c.ci_high,
                            "comparison_verdict": c.verdict,
                            "comparison_category": c.category,
                        }
                    )
    for computed in audit.computed:
        rows.append(
            {
                "statement": computed.claim.id,
                "statement_verdict": computed.verdict,
                "reading": computed.claim.id,
                "reading_verdict": computed.verdict,
            }
        )
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def write_audit(
    audit: Audit,
    md_path: Path | str,
    json_path: Path | str,
    html_path: Path | str | None = None,
    csv_path: Path | str | None = None,
) -> None:
    """Write the audit as Markdown, JSON (the records' one writer), HTML and its verdict table as CSV
    (:func:`verdict_table`), all or none."""
    optional = [p for p in (html_path, csv_path) if p is not None]
    with atomic_paths(md_path, json_path, *optional) as temps:
        temps[0].write_text(render_markdown(audit), encoding="utf-8")
        temps[1].write_text(audit_json(audit), encoding="utf-8")
        written = dict(zip(optional, temps[2:], strict=True))
        if html_path is not None:
            written[html_path].write_text(render_html(audit), encoding="utf-8")
        if csv_path is not None:
            verdict_table(audit).to_csv(written[csv_path], index=False)
