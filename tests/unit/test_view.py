"""The view of the findings (vhct.reporting.view) on made-up audits: effects before margins, pairs that
disagree as "mixed", the paper's scale from data, and one count of statements everywhere."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from findings_run import complete
from support import made_up_provenance

from vhct.article.build import check_counts
from vhct.article.sources import ArticleError
from vhct.pipeline.specs import ExperimentInfo, SettingInfo
from vhct.reporting.audit.claims_model import CLAIM_KINDS
from vhct.reporting.audit.records import AUDIT_FORMAT, Comparison, MarginReading, parse_audit
from vhct.reporting.render import headline, render_findings, render_markdown, render_readme
from vhct.reporting.view import (
    build_view,
    count_mismatches,
    kind_names,
    ratio_words,
    stated_counts,
    table_pair,
)

SEEDS = list(range(20))


def comparison(experiment: str, effect: float, low: float, high: float, verdict: str, **fields) -> dict:
    """A made-up decided comparison of A against B (ratio of means; claimed: A below 0.95 B)."""
    category = {"not reproduced": "the opposite", "inconclusive": "underpowered"}.get(verdict, verdict)
    return Comparison(
        experiment=experiment,
        a="A",
        b="B",
        claimed="mean_a < 0.95 mean_b",
        refuted="mean_a > 1.053 mean_b",
        n_a=20,
        n_b=20,
        mean_a=effect,
        mean_b=1.0,
        effect=effect,
        effect_name="ratio of means",
        ci_low=low,
        ci_high=high,
        ci_level=0.9,
        p_claimed=0.5,
        p_refuted=0.5,
        p_refuted_holm=0.5,
        verdict=verdict,
        category=category,
        reason="r",
        **fields,
    ).to_json()


def made_up(pairs: dict[str, dict], verdict: str, horizon: int = 100, **claim) -> object:
    """An audit of one claim ("made-up-claim") whose comparisons are ``pairs`` (experiment -> comparison)."""
    settings = {"A": {"label": "Alpha, p=1"}, "B": {"label": "Beta, p=2"}}
    experiments = {name: {"horizon": horizon, "seeds": SEEDS, "settings": settings} for name in pairs}
    return parse_audit(
        complete(
            {
                "format": AUDIT_FORMAT,
                "sensitivity": [],
                "discrepancies": [],
                "reading_flips": [],
                "flipped_claims": [],
                "claims": [
                    {
                        "id": "made-up-claim",
                        "quote": "q",
                        "location": "l",
                        "verdict": verdict,
                        "category": "the opposite" if verdict == "not reproduced" else verdict,
                        "reason": "r",
                        "coverage": "all",
                        "experiments": [
                            {"experiment": e, "verdict": c["verdict"], "reason": "r", "comparisons": [c]}
                            for e, c in pairs.items()
                        ],
                        "target": "A",
                        "others": ["B"],
                        **claim,
                    }
                ],
                "context": {"experiments": experiments},
            }
        )
    )


_audit = made_up


def paper(name: str, horizon: int, **params) -> dict[str, ExperimentInfo]:
    """The paper's scale of one made-up experiment: ``horizon`` rounds, its objective ``params``."""
    setting = SettingInfo(algorithm="A", label="A", params={}, horizon=horizon, seeds=SEEDS)
    info = ExperimentInfo(
        name=name,
        title=name,
        objective="garland",
        objective_params=params,
        noise=0.05,
        horizon=horizon,
        seeds=SEEDS,
        settings={"A": setting, "B": setting},
    )
    return {name: info}


def test_the_effect_sentence_states_the_records_effect_and_interval():
    """One pair: its ratio said as a size and a way, with its interval, the numbers the record's."""
    pairs = {"e1": comparison("e1", 0.979, 0.974, 0.984, "not reproduced")}
    view = build_view(_audit(pairs, "not reproduced"))
    reading = view.readings[0]
    size, interval, way = ratio_words(0.979, 0.974, 0.984)
    assert (size, interval, way) == ("2.1 %", "[1.6, 2.6]", "below")
    assert reading.effect == "Alpha's mean final regret is 2.1 % [1.6, 2.6] below Beta's on e1"
    # the effect leads the headline; where words of the paper state the size, the no-margin reading
    # stands beside the verdict at that size
    assert reading.headline.startswith(reading.effect[:1].upper() + reading.effect[1:])
    assert "without a margin in the statement's direction on 1 of 1 pairs" in reading.headline
    said = '"by a made-up size" read as min_relative_effect = 0.05: not reproduced'
    assert reading.headline.index(said) > reading.headline.index("2.1 %")
    # the numbers follow the record: another effect, another sentence
    other = build_view(_audit({"e1": comparison("e1", 0.9, 0.8, 0.95, "reproduced")}, "reproduced"))
    assert "10.0 % [5.0, 20] below" in other.readings[0].effect


def test_where_the_paper_states_no_size_the_no_margin_verdict_is_the_headline():
    """A claim tested at no difference (no ``size``): its verdict leads and is counted; the verdict at
    the project's margin stands beside it, and a margin that would refute it makes it a finding."""
    pairs = {"e1": comparison("e1", 0.979, 0.974, 0.984, "reproduced")}
    audit = made_up(pairs, "reproduced", thresholds={"min_relative_effect": 0.0})
    claim = audit.claims[0]
    at_margin = MarginReading(
        thresholds={"min_relative_effect": 0.05},
        verdict="not reproduced",
        category="no effect of the claimed size",
        reason="r",
        coverage="all",
        experiments=claim.experiments,
    )
    audit = audit.model_copy(update={"claims": [claim.model_copy(update={"margins": [at_margin]})]})
    view = build_view(audit)
    reading = view.readings[0]
    assert claim.claim.size is None and reading.margin is None
    assert view.counts["reproduced"] == 1 and view.statements[0].verdict == "reproduced"
    assert reading.headline == (
        "Alpha's mean final regret is 2.1 % [1.6, 2.6] below Beta's on e1: reproduced; at the project's "
        "margin min_relative_effect = 0.05: not reproduced: no effect of the claimed size."
    )
    assert reading.margin_decides and reading in view.matters
    # reproduced at the margin too: the margin decides nothing
    same = at_margin.model_copy(update={"verdict": "reproduced", "category": "reproduced"})
    agree = audit.model_copy(update={"claims": [claim.model_copy(update={"margins": [same]})]})
    assert not build_view(agree).readings[0].margin_decides


def test_pairs_that_disagree_are_mixed_each_pair_shown():
    """A reading whose pairs disagree is "mixed: k of m pairs", never the verdict of one pair."""
    pairs = {
        "e1": comparison("e1", 0.8, 0.75, 0.85, "reproduced"),
        "e2": comparison("e2", 0.7, 0.65, 0.75, "reproduced"),
        "e3": comparison("e3", 1.2, 1.1, 1.3, "not reproduced"),
    }
    reading = build_view(_audit(pairs, "not reproduced")).readings[0]
    assert reading.mixed == (2, 3)
    assert reading.verdict_text.startswith("mixed: 2 of 3 pairs")
    assert "mixed: 2 of 3 pairs" in reading.headline
    assert [p.experiment for p in reading.pairs] == ["e1", "e2", "e3"]
    assert [p.no_margin for p in reading.pairs] == ["supports", "supports", "against"]
    # pairs that agree are not mixed
    agree = {k: comparison(k, 0.8, 0.75, 0.85, "reproduced") for k in ("e1", "e2")}
    assert build_view(_audit(agree, "reproduced")).readings[0].mixed is None


def test_a_reduced_task_is_not_evaluated_at_the_papers_scale():
    """A reading decided on an experiment run below the paper's scale (fewer rounds, a data subset)
    says so in its headline, its reduced-scale verdict beside; at the paper's scale it does not."""
    pairs = {"task": comparison("task", 1.2, 1.1, 1.3, "not reproduced")}
    audit = _audit(pairs, "not reproduced", horizon=100)
    reduced = build_view(audit, paper("task", 500)).readings[0]
    assert reduced.below_scale
    assert "not evaluated at the paper's scale" in reduced.headline
    assert "not reproduced: the opposite at reduced scale" in reduced.headline
    assert "n = 100 rounds (the paper's scale: 500)" in reduced.headline
    at_scale = build_view(audit, paper("task", 100)).readings[0]
    assert not at_scale.below_scale and "paper's scale" not in at_scale.headline
    assert not build_view(audit).readings[0].below_scale  # no paper's scale given: nothing compared


def test_count_consistency_fails_on_a_changed_count():
    """Every section states the view's one count of statements and readings; a changed count is found."""
    pairs = {"e1": comparison("e1", 0.8, 0.75, 0.85, "reproduced")}
    audit = _audit(pairs, "reproduced")
    view = build_view(audit)
    text = headline(audit) + "\n" + render_readme(audit, "findings.md")
    assert stated_counts(text)["statements"] == {1}
    assert count_mismatches(text, view) == []
    changed = text + "\nOf the 2 statements, none."
    assert count_mismatches(changed, view) == ["2 statements stated, the audit has 1"]


def test_findings_state_one_count(tmp_path):
    """The findings document states the view's count wherever it counts statements."""
    pairs = {
        "e1": comparison("e1", 0.8, 0.75, 0.85, "reproduced"),
        "e2": comparison("e2", 1.2, 1.1, 1.3, "not reproduced"),
    }
    audit = _audit(pairs, "not reproduced")
    text = render_findings(audit, made_up_provenance(), {}, [], "figures")
    assert count_mismatches(text, build_view(audit)) == []


def test_the_article_refuses_sections_that_disagree_on_the_counts():
    """The article's build checks its source against the view's one count before typesetting."""
    pairs = {"e1": comparison("e1", 0.8, 0.75, 0.85, "reproduced")}
    article = SimpleNamespace(view=build_view(_audit(pairs, "reproduced")))
    check_counts("1 statements of the paper (1 readings: ...). Of the 1 statements: 1 reproduced.", article)
    with pytest.raises(ArticleError, match="3 statements stated, the audit has 1"):
        check_counts(
            "1 statements of the paper (1 readings). In all, 2 of the 3 statements are not.", article
        )


def test_a_wall_time_in_units_of_a_threshold_is_printed_as_a_duration_in_the_glance_table():
    """The audit's effect "mean wall time per run / 3600 s" (a fraction of the statement's hour) is a
    duration in the glance tables (audit.md, findings.md), as the view's pair gives it."""
    wall = comparison("mnist", 0.007107, 0.006207, 0.007798, "not reproduced")
    wall.update(effect_name="mean wall time per run to t = 100 / 3600 s", b="-")
    audit = _audit({"mnist": wall}, "not reproduced")
    pair = table_pair(audit.claims[0].experiments[0].comparisons[0])
    assert (pair.effect_name, pair.value, pair.interval) == (
        "mean wall time per run to t = 100",
        "25.6 s",
        "22.3 s to 28.1 s",
    )
    for text in (render_markdown(audit), render_findings(audit, made_up_provenance(), {}, [], "figures")):
        assert "mnist: A, mean wall time per run to t = 100: 25.6 s (interval 22.3 s to 28.1 s)" in text
        line = next(x for x in text.splitlines() if "mnist: A, mean wall time" in x)
        assert "3600" not in line and "0.007107" not in line
    # another effect keeps its number as the audit prints it
    ratio = _audit({"e1": comparison("e1", 0.979, 0.974, 0.984, "not reproduced")}, "not reproduced")
    assert "ratio of means 0.979 (interval 0.974 to 0.984)" in render_markdown(ratio)


def test_wall_times_over_several_experiments_are_summed_up_in_durations():
    """A wall-time reading over three experiments leads with the smallest and largest mean run time as
    durations, where each was measured, which are lower bounds and the threshold, never "/ 3600 s"
    or "pairs" (issue 50 item 5: "hours and minutes, not fractions of 3600 s")."""
    times = {"mnist": 0.001854, "landmine": 0.01064, "garland": 0.1128}
    pairs = {}
    for e, t in times.items():
        to = "to t = 500" + (" (measured to t = 200, extended: a lower bound)" if e != "mnist" else "")
        pairs[e] = comparison(e, t, 0.9 * t, 1.1 * t, "not reproduced")
        pairs[e].update(effect_name=f"mean wall time per run {to} / 3600 s", b="-", claimed="mean_a > 1")
    claim = {"kind": "wall_time", "direction": "greater", "statistic": "seconds_per_round"}
    claim.update(thresholds={"seconds": 3600}, effect_of_interest={"value": 1.1, "reason": "made up"})
    reading = build_view(_audit(pairs, "not reproduced", **claim)).readings[0]
    assert reading.effect == (
        "Alpha's mean wall time per run from 6.67 s (mnist) to 6 min 46 s (garland) over 3 experiments "
        "(each to its horizon; a lower bound on landmine and garland: stopped early, extended), "
        "against 1 h"
    )
    assert (reading.value, reading.interval) == ("6.67 s to 6 min 46 s", "per pair")
    assert "3600" not in reading.headline and "pairs" not in reading.headline
    garland = next(p for p in reading.pairs if p.experiment == "garland")
    assert garland.sentence.endswith("on garland is 6 min 46 s [6 min 05 s, 7 min 27 s], against 1 h")


def test_every_claim_kind_has_a_name_in_words_in_the_template():
    """The statements' names in words are prose of the template ``kind_names.j2``: every claim kind
    has one (a kind without one would be named by its id), filled with the record's values."""
    values = {k: f"<{k}>" for k in ("target", "others", "claimed", "what", "pairs", "direction", "limit")}
    values["named_others"] = True  # a lowest claim against few others names them
    values["pair_list"] = []  # pairs too many to name: counted
    for kind in CLAIM_KINDS:
        name = str(kind_names().name(kind, values))
        assert name and "<" in name, kind
    assert str(kind_names().name("no-such-kind", values)) == ""
    assert str(kind_names().name("wall_time", values)) == "runs of <others> take <direction> <limit> each"
    assert str(kind_names().name("easier", values)) == (
        "in each of <pairs>, the first is easier than the second (<what> of <others>)"
    )
    named = {**values, "pair_list": [("a", "b"), ("a", "c")]}
    assert str(kind_names().name("easier", named)) == (
        "a is easier than b and a is easier than c (<what> of <others>)"
    )
    assert str(kind_names().name("best_parameter", values)) == "the best parameter for <what> is <claimed>"
    many = {**values, "named_others": False}  # too many others to name: "the lowest"
    assert str(kind_names().name("lowest", values)) == "<target> has a lower <what> than <others>"
    assert str(kind_names().name("lowest", many)) == "<target> has the lowest <what>"


def test_a_statement_checked_by_computation_is_named_in_words():
    """Each check and claimed outcome of a computed statement has its words in the template, its
    resolutions written as the paper writes them."""
    from vhct.reporting.audit.claims_model import ComputedClaim
    from vhct.reporting.view import computed_name

    base = {"id": "x-y", "quote": "q", "location": "l", "objective": "counterexample"}
    gls = {"check": "gls", "max_depth": 3}
    names = {
        claimed: computed_name(ComputedClaim(**base, **gls, claimed=claimed, resolutions=resolutions))
        for claimed, resolutions in (
            ("holds", [{"kind": "polynomial", "a": 2.0, "p": 1.0}]),
            ("violated", [{"kind": "exponential", "nu": 1.0, "rho": r} for r in (0.5, 0.75, 0.9)]),
        )
    }
    for claimed in ("exponential", "polynomial"):
        claim = ComputedClaim(**base, check="near_optimal_growth", claimed=claimed, min_growth=1.05)
        names[claimed] = computed_name(claim)
    assert names == {
        "holds": "counterexample meets the local smoothness condition at phi(h) = 2/h",
        "violated": "counterexample fails the local smoothness condition at each of 3 resolutions "
        "(phi(h) = 1 * 0.5^h, ...)",
        "exponential": "counterexample's near-optimal cells grow exponentially with depth",
        "polynomial": "counterexample's near-optimal cells grow polynomially with depth (a finite "
        "near-optimality dimension)",
    }
    assert not any("x-y" in n or "x y" in n for n in names.values())


def test_lists_read_as_a_sentence_lists_them():
    from vhct.reporting.view import listed

    assert [listed(x) for x in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == ["", "a", "a and b", "a, b and c"]
    assert listed(["x", "y"], "or") == "x or y"
