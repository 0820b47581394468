"""The audit's one-page summary figure (``vhct.reporting.plots.summary``): one row per statement, its
marker in its verdict's colour (the verdicts' one palette), every text inside a portrait page."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from findings_run import COMPUTED, complete  # noqa: E402

from vhct.pipeline.specs import ExperimentInfo, SettingInfo  # noqa: E402
from vhct.reporting.audit.records import AUDIT_FORMAT, Audit, ClaimVerdict, Comparison, parse_audit  # noqa: E402
from vhct.reporting.audit.verdicts import statements  # noqa: E402
from vhct.reporting.plots.common import PNG_DPI  # noqa: E402
from vhct.reporting.plots.summary import audit_summary, draw_summary, summary_rows  # noqa: E402
from vhct.reporting.styles import verdict_colour  # noqa: E402
from vhct.reporting.view import build_view, computed_name  # noqa: E402

#: the smaller of A4 (8.27 x 11.69 in) and US letter (8.5 x 11 in), portrait
PAGE = (8.27, 11.0)
VERDICTS = ("reproduced", "not reproduced", "inconclusive")
CATEGORIES = {"reproduced": "reproduced", "not reproduced": "the opposite", "inconclusive": "underpowered"}


def made_up_audit(n: int, computed: int = 0) -> Audit:
    """``n`` statements, the first with two readings that disagree, each reading one comparison, and
    ``computed`` statements decided by computation."""
    claims = []
    for k in range(n + 1):
        verdict = VERDICTS[k % 3]
        c = Comparison(
            "garland",
            "VHCT",
            "HCT",
            effect=0.9 + 0.01 * k,
            effect_name="ratio of means",
            ci_low=0.85,
            ci_high=0.95 + 0.01 * k,
            ci_level=0.9,
            verdict=verdict,
            category=CATEGORIES[verdict],
            p_claimed=0.01,
            p_refuted=0.5,
            p_refuted_holm=0.5,
            n_a=20,
            n_b=20,
            mean_a=0.9 + 0.01 * k,
            mean_b=1.0,
        )
        claim = {
            "id": f"statement-number-{k}",
            "quote": "q",
            "location": "l",
            "verdict": verdict,
            "category": CATEGORIES[verdict],
            "coverage": "garland",
            "reason": "r",
            "experiments": [
                {"experiment": "garland", "verdict": verdict, "reason": "r", "comparisons": [c.to_json()]}
            ],
        }
        if k < 2:  # two readings of one statement
            claim["reading_of"] = "two-readings"
        claims.append(claim)
    audit = complete(
        {
            "format": AUDIT_FORMAT,
            "reading_flips": [],
            "flipped_claims": [],
            "sensitivity": [],
            "discrepancies": [],
            "claims": claims,
            "computed": [
                {**COMPUTED, "claim": {**COMPUTED["claim"], "id": f"computed-{k}"}} for k in range(computed)
            ],
        }
    )
    return parse_audit(audit)


def row_texts(fig) -> tuple[list[str], list[str]]:
    """The rows' names and the lines under them, top to bottom (each row draws its name, then its
    detail)."""
    texts = [t.get_text() for t in fig.axes[0].texts]
    return texts[0::2], texts[1::2]


def inside_the_page(fig) -> bool:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [
        t
        for t in fig.findobj(lambda o: hasattr(o, "get_text") and hasattr(o, "get_window_extent"))
        if t.get_text()
    ]
    extents = [t.get_window_extent(renderer) for t in texts]
    inside = all(e.x0 >= 0 and e.x1 <= box.width and e.y0 >= 0 and e.y1 <= box.height for e in extents)
    # no two texts of the rows (names, the lines under them) overlap
    rows = [t.get_window_extent(renderer) for t in fig.axes[0].texts]
    apart = not any(a.overlaps(b) for i, a in enumerate(rows) for b in rows[i + 1 :])
    return inside and apart


@pytest.mark.parametrize("n", [1, 34, 60])
def test_one_row_per_statement_on_one_portrait_page(tmp_path, n):
    """A made-up audit of ``n`` statements: a row per statement named in words as the view names it
    (never by its id), the PNG within a portrait page at the figures' resolution, every text inside
    it and no two overlapping."""
    audit = made_up_audit(n)
    assert len(statements(audit.claims)) == n
    png = next(p for p in audit_summary(audit, tmp_path / "audit_summary") if p.suffix == ".png")
    import matplotlib.image as mpimg

    height, width = mpimg.imread(png).shape[:2]
    assert width / PNG_DPI <= PAGE[0] and height / PNG_DPI <= PAGE[1]
    fig = draw_summary(summary_rows(audit))
    names, details = row_texts(fig)
    view = build_view(audit)
    assert [n.replace("\n", " ") for n in names] == [s.name for s in view.statements]
    assert names[0] == "A has a lower final regret than B on e"  # the two readings' name, unnumbered
    ids = {c.claim.id for c in audit.claims} | {c.claim.reading_of for c in audit.claims}
    assert not any(i and (i in t or i.replace("-", " ") in t) for i in ids for t in names + details)
    if n > 1:
        assert details[1].replace("\n", " ").endswith("Verdict: inconclusive: underpowered")
    assert "reading 1: reproduced; reading 2: not reproduced: the opposite" in details[0].replace("\n", " ")
    assert inside_the_page(fig)


def test_each_marker_is_its_statements_verdict_colour():
    """The marker of a statement is its verdict's colour; two readings that disagree get that colour."""
    audit = made_up_audit(4)
    fig = draw_summary(summary_rows(audit))
    markers = [line.get_color() for line in fig.axes[0].get_lines()]
    want = [verdict_colour(s.verdict, s.category) for s in statements(audit.claims)]
    assert markers == want
    assert want[0] == verdict_colour("readings disagree") and len(set(want)) == 4


def experiment(horizon: int) -> ExperimentInfo:
    """The made-up audits' experiment (garland, VHCT against HCT at 20 seeds) run to ``horizon``."""
    setting = {"algorithm": "A", "params": {}, "horizon": horizon, "seeds": list(range(20))}
    settings = {s: SettingInfo(label=s, **setting) for s in ("VHCT", "HCT")}
    return ExperimentInfo(
        name="garland",
        title="garland",
        objective="garland",
        objective_params={},
        noise=0.05,
        horizon=horizon,
        seeds=list(range(20)),
        settings=settings,
    )


def test_a_wall_time_is_a_duration_and_a_reduced_task_says_so():
    """A wall-time effect (in units of the statement's hour) is told in seconds, minutes or hours, never
    as a fraction of 3600 s; beside the paper's scale, a statement decided below it says so."""
    audit = made_up_audit(2)
    record = audit.claims[-1].model_dump(mode="json")
    record["experiments"][0]["comparisons"][0].update(
        effect=0.007107,
        ci_low=0.006207,
        ci_high=0.007798,
        effect_name="mean wall time per run to t = 100 / 3600 s",
    )
    claims = [*audit.claims[:-1], ClaimVerdict.model_validate(record)]
    context = audit.context.model_copy(update={"experiments": {"garland": experiment(100)}})
    audit = audit.model_copy(update={"claims": claims, "context": context})
    row = summary_rows(audit)[-1]
    assert "25.6 s" in row.detail and "22.3 s" in row.detail
    assert "3600" not in row.detail and "0.007107" not in row.detail
    assert "paper's scale" not in row.detail
    reduced = summary_rows(audit, {"garland": experiment(5000)})[-1]
    assert "Verdict: not at the paper's scale (inconclusive: underpowered at reduced scale)" in reduced.detail


def test_statements_decided_by_computation_get_a_row_each_inside_the_page():
    """As many statements as the claims file holds, on runs and by computation: a row each (the
    computed ones after those on runs, named in words), inside one page."""
    from vhct.reporting.audit.claims import load_claims

    claims = load_claims()
    on_runs = len({c.reading_of or c.id for c in claims.claims})
    audit = made_up_audit(on_runs, computed=len(claims.computed))
    fig = draw_summary(summary_rows(audit))
    width, height = fig.get_size_inches()
    assert width <= PAGE[0] and height <= PAGE[1]
    names, details = row_texts(fig)
    assert len(names) == on_runs + len(claims.computed)
    computed = [computed_name(c.claim) for c in audit.computed]
    assert [n.replace("\n", " ") for n in names[on_runs:]] == computed
    assert computed[0] == "garland meets the local smoothness condition at phi(h) = 1 * 0.5^h"
    assert all(d.endswith("Verdict: reproduced") for d in details[on_runs:])
    assert inside_the_page(fig)


def test_a_statement_not_evaluated_gives_its_verdict_alone():
    """A statement none of whose pairs was evaluated (e.g. a quick start below a claim's seeds) has no
    effect to tell: the line under its name is its verdict, with no stray punctuation before it."""
    audit = made_up_audit(2)
    record = audit.claims[-1].model_dump(mode="json")
    record.update(verdict="not evaluated", category="not evaluated")
    record["experiments"] = []
    audit = audit.model_copy(update={"claims": [*audit.claims[:-1], ClaimVerdict.model_validate(record)]})
    assert summary_rows(audit)[-1].detail == "Verdict: not evaluated"
