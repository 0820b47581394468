"""The claims file and the questions beyond the paper as typed records: the committed schemas are
the models', a record missing what its kind needs is refused naming the file and the key, and the
real files are read by the real evaluator (writer meets reader)."""

from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from support import REPO

from vhct.pipeline import config as vc
from vhct.reporting import audit
from vhct.reporting.audit import claims_model, questions_model, schema
from vhct.reporting.audit.beyond import run_beyond
from vhct.reporting.audit.claims import ClaimsError, left_out, load_beyond, load_claims, substitute_settings
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.runs import Run
from vhct.resources import BEYOND_SCHEMA, CLAIMS_SCHEMA, resource_path

CLAIMS_FILE = REPO / "config" / "claims.yaml"
BEYOND_FILE = REPO / "config" / "beyond.yaml"


def written(path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", [CLAIMS_SCHEMA, BEYOND_SCHEMA])
def test_the_shipped_schemas_are_the_models(name):
    """One source: each schema file is generated from its model (python -m vhct.reporting.audit.schema)."""
    assert resource_path(name).read_text(encoding="utf-8") == schema.schema_text(name)


@pytest.mark.parametrize(
    ("schema_name", "path"), [(CLAIMS_SCHEMA, CLAIMS_FILE), (BEYOND_SCHEMA, BEYOND_FILE)]
)
def test_the_schema_accepts_the_shipped_file_and_states_what_each_kind_needs(schema_name, path):
    validator = jsonschema.Draft202012Validator(yaml.safe_load(resource_path(schema_name).read_text()))
    doc = written(path)
    assert list(validator.iter_errors(doc)) == []
    if schema_name == CLAIMS_SCHEMA:  # the kind table reaches the schema: a lowest claim needs a target
        claim = next(c for c in doc["claims"] if c["kind"] == "lowest")
        claim.pop("target")
        assert [e.message for e in validator.iter_errors(doc)] == ["'target' is a required property"]


def refusal(tmp_path, picked, mutate) -> tuple[int, str, object]:
    """The shipped claims file with its first claim ``picked`` (a predicate) changed by ``mutate``,
    written and loaded: the claim's index, the loader's refusal and the file's path."""
    doc = written(CLAIMS_FILE)
    i = next(i for i, c in enumerate(doc["claims"]) if picked(c))
    mutate(doc["claims"][i])
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ClaimsError) as refused:
        load_claims(path)
    return i, str(refused.value), path


@pytest.mark.parametrize(
    ("mutate", "key", "text"),
    [
        # a greater claim without the threshold its kind needs
        (lambda c: c["thresholds"].pop("min_ratio"), "thresholds", "'min_ratio' is a required property of a"),
        (lambda c: c.pop("thresholds"), "", "'thresholds' is a required property"),
        (lambda c: c.pop("target"), "", "'target' is a required property of a greater claim"),
        (lambda c: c.update(round=0), "/round", "greater than or equal to 1"),
    ],
)
def test_a_claim_missing_what_its_kind_needs_is_refused_naming_file_and_key(tmp_path, mutate, key, text):
    i, message, path = refusal(tmp_path, lambda c: c["kind"] == "greater", mutate)
    assert message.startswith(f"claims file {path}: key claims/{i}{key + ':' if key.startswith('/') else ''}")
    if key and not key.startswith("/"):
        assert f"key claims/{i}/{key}:" in message
    assert text in message and "\n" not in message


@pytest.mark.parametrize(
    ("cid", "mutate", "text"),
    [
        # the paper states no size: a margin of the project's is refused as the claim's own thresholds
        (
            "phi-conjecture-equal-resolution",
            lambda c: c.update(thresholds={"min_relative_effect": 0.05}),
            "the thresholds are a margin (min_relative_effect = 0.05) and no words of the paper state",
        ),
        # a kind that reads a size by its nature (a band) quotes the words that state it
        ("high-noise-vhct-hct-similar", lambda c: c.pop("size"), "a similar claim reads a size"),
        # the words must be the quote's
        ("bo-cost", lambda c: c.update(size="ten times"), "'ten times' is not words of the quote"),
    ],
)
def test_a_margin_is_the_claims_own_only_where_words_of_the_paper_state_its_size(tmp_path, cid, mutate, text):
    i, message, _ = refusal(tmp_path, lambda c: c["id"] == cid, mutate)
    assert f"key claims/{i}/size:" in message and text in message and "\n" not in message


def test_where_the_paper_states_no_size_the_claim_tests_no_difference_its_margin_beside():
    """Every claim of the shipped file either quotes the words that state its size or is tested at no
    difference, the project's margins (if any) read beside it."""
    claims = load_claims(CLAIMS_FILE).claims
    plain = [c for c in claims if c.size is None]
    assert plain and all(c.spec.at_no_difference(c) for c in plain)
    beside = {c.id: c.at_margins()[0].thresholds.given() for c in plain if c.margins}
    assert beside["phi-conjecture-equal-resolution"] == {"min_relative_effect": 0.05}
    assert all(c.size in " ".join(c.quote.split()) for c in claims if c.size)


def test_a_question_missing_its_setting_is_refused_naming_file_and_key(tmp_path):
    doc = written(BEYOND_FILE)
    doc["questions"][3].pop("a")
    path = tmp_path / "beyond.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ClaimsError, match=rf"^beyond file {path}: key questions/3: 'a' is a required"):
        load_beyond(path)


def test_defaults_resolved_and_records_frozen():
    doc = written(CLAIMS_FILE)
    claims = load_claims(CLAIMS_FILE)
    for claim, raw in zip(claims.claims, doc["claims"], strict=True):
        assert claim.require == raw.get("require", doc["defaults"]["require"])
        assert claim.round == raw.get("round", doc["defaults"]["round"])
    with pytest.raises(ValueError, match="frozen"):
        claims.claims[0].alpha = 0.5  # type: ignore[misc]
    beyond = load_beyond(BEYOND_FILE)
    assert all(q.thresholds.min_relative_effect == 0.05 and q.round == "common" for q in beyond.questions)


def fake_runs(experiments, settings, seeds: int = 3, horizon: int = 12) -> dict:
    """Made-up runs of every setting on every experiment (regret growing like t^0.7)."""
    import numpy as np
    import pandas as pd

    out = {}
    for k, e in enumerate(experiments):
        out[e] = {}
        for j, s in enumerate(settings):
            t = np.arange(1, horizon + 1)
            runs = []
            for seed in range(seeds):
                cum = (1.0 + 0.1 * j + 0.01 * seed + 0.001 * k) * t**0.7
                table = pd.DataFrame(
                    {
                        "t": t,
                        "value": -np.diff(cum, prepend=0.0),
                        "cumulative_regret": cum,
                        "depth": np.full(horizon, 2.0 + j),
                        "step_seconds": np.full(horizon, 1e-3),
                        "optimizer_seconds": np.full(horizon, 1e-4),
                    }
                )
                runs.append(Run(seed, table, 0.0))
            out[e][s] = runs
    return out


def test_the_real_claims_file_is_read_by_the_real_evaluator():
    """Writer meets reader: every claim of config/claims.yaml evaluated, its verdict record embedding
    the claim record the file wrote (thresholds as written, defaults resolved), the config's
    skip_claims reaching the evaluator as the experiments it leaves out."""
    doc = written(CLAIMS_FILE)
    claims = load_claims(CLAIMS_FILE)
    experiments = [e for c in claims.claims for e in c.experiments_read]
    settings = list(dict.fromkeys(s for c in claims.claims for s in c.settings))
    cfg, _ = vc.load([REPO / "config" / "config.yaml"])
    skipped = left_out(claims, cfg)
    skipping = {e for e, exp in cfg.experiments.items() if exp.skip_claims}
    assert (
        skipping
        and any(skipped.values())
        and all((e in skipped[c]) == (c in cfg.experiments[e].skip_claims) for c in skipped for e in skipping)
    )
    assert all("skip_claims" in why for reasons in skipped.values() for why in reasons.values())
    result = run_audit(claims, fake_runs(dict.fromkeys(experiments), settings), None, {}, skipped)
    assert [c.claim.id for c in result.claims] == [c["id"] for c in doc["claims"]]
    for verdict, claim, raw in zip(result.claims, claims.claims, doc["claims"], strict=True):
        assert verdict.claim == claim  # the claims file's record itself
        assert verdict.claim.thresholds.given() == raw["thresholds"]
        assert verdict.claim.alpha == raw.get("alpha", doc["defaults"]["alpha"])
        assert verdict.claim.min_seeds == raw.get("min_seeds", doc["defaults"]["min_seeds"])
        for key in ("kind", "statistic", "target", "others", "claimed", "pairs", "checkpoints", "direction"):
            assert getattr(verdict.claim, key) == raw.get(key), (raw["id"], key)
        for e in skipped[claim.id]:
            reasons = [x.reason for x in verdict.experiments if x.experiment == e]
            assert reasons and all("leaves this claim out" in r for r in reasons), (claim.id, e)
    assert result.rules == doc["rules"]
    assert [d.model_dump() for d in result.discrepancies] == doc["discrepancies"]
    for key in ("substitute", "choose_best"):  # each row gives one kind of variant, the others empty
        given = [c.get(key, {}) for c in doc["sensitivity"]]
        assert [getattr(s.choice, key) for s in result.sensitivity] == given
    assert [s.choice.round for s in result.sensitivity] == [c.get("round") for c in doc["sensitivity"]]
    assert [s.choice for s in result.sensitivity] == claims.sensitivity


def test_the_real_questions_file_is_read_by_the_real_evaluator():
    doc = written(BEYOND_FILE)
    beyond = load_beyond(BEYOND_FILE)
    settings = list(dict.fromkeys(s for q in beyond.questions for s in (q.a, q.b)))
    part = run_beyond(beyond, fake_runs(beyond.experiments, settings, seeds=20))
    assert part is not None and part.rules == doc["rules"]
    for answer, question, raw in zip(part.questions, beyond.questions, doc["questions"], strict=True):
        assert answer.question == question  # the questions file's record itself
        q = answer.question
        assert (q.id, q.a, q.b) == (raw["id"], raw["a"], raw["b"])
        assert q.thresholds.given() == doc["defaults"]["thresholds"] and q.round == doc["defaults"]["round"]
        assert [r.experiment for r in answer.experiments] == doc["defaults"]["experiments"]


def test_a_variant_is_a_new_typed_claim_and_a_question_a_typed_lowest_claim():
    claims = load_claims()
    choice = claims.sensitivity[0]
    claim = next(c for c in claims.claims if set(c.settings) & set(choice.substitute))
    variant = substitute_settings(claim, choice.substitute)
    assert isinstance(variant, claims_model.Claim) and variant.id == claim.id
    assert variant.settings == [choice.substitute.get(s, s) for s in claim.settings]
    assert claim == load_claims().claims[claims.claims.index(claim)]  # the default untouched
    question = load_beyond().questions[0]
    as_claim = audit.beyond.question_claim(question)
    assert (as_claim.kind, as_claim.target, as_claim.others) == ("lowest", question.a, [question.b])
    with pytest.raises(ValueError, match="key b: the same setting as a"):
        questions_model.Question.model_validate({**question.model_dump(), "b": question.a})
    with pytest.raises(ValueError, match="settings listed twice"):
        claims_model.Claim.model_validate(
            {**copy.deepcopy(claim.model_dump(exclude_none=True)), "others": [claim.target]}
        )


def test_an_experiment_run_otherwise_than_the_paper_is_not_evaluated_saying_how():
    """Issue 40 item 5: the tiny config with Garland's noise at 0.1 (the paper: 0.05) and Garland's
    objective swapped: the real claims file's conditions keep the claims about Garland from being
    judged there, each reason naming the departure; the other experiments are judged as before."""
    from support import TINY

    claims = load_claims(CLAIMS_FILE)
    noisy, _ = vc.load([TINY], {"experiments": {"garland": {"noise": 0.1}}})
    reasons = left_out(claims, noisy)
    about_garland = [c for c in claims.claims if "garland" in c.experiments_read]
    assert about_garland and all(
        reasons[c.id]["garland"] == "this config runs garland with noise 0.1 (the paper's: 0.05, "
        'App. "Experiment Details", every experiment of Sec. 5 and App.): not the claim\'s experiment'
        for c in about_garland
    )
    assert all("skip_claims" in why for r in reasons.values() for e, why in r.items() if e != "garland")
    settings = list(dict.fromkeys(s for c in claims.claims for s in c.settings))
    runs = fake_runs(dict.fromkeys(e for c in claims.claims for e in c.experiments_read), settings)
    audit = run_audit(claims, runs, None, {}, reasons)
    judged = {c.claim.id: {e.experiment: e for e in c.experiments} for c in audit.claims}
    for claim in about_garland:
        if not claim.pairs:
            garland = judged[claim.id]["garland"]
            assert garland.verdict == "not evaluated" and "noise 0.1 (the paper's: 0.05" in garland.reason
    assert "the paper's" not in judged["synthetic-vhct-among-fastest"]["himmelblau"].reason
    swapped, _ = vc.load([TINY], {"experiments": {"garland": {"objective": "himmelblau"}}})
    assert left_out(claims, swapped)[about_garland[0].id]["garland"].startswith(
        "this config runs garland with objective himmelblau (the paper's: garland)"
    )
    assert audit.conditions == claims.conditions  # recorded in the audit, as the file states them


def test_a_claims_file_without_the_conditions_of_an_experiment_it_reads_is_refused(tmp_path):
    doc = written(CLAIMS_FILE)
    del doc["conditions"]["himmelblau"]
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ClaimsError, match=r"key claims/\d+/experiments: no conditions for himmelblau"):
        load_claims(path)


def test_a_claims_statistic_is_a_row_of_the_statistics_table_which_the_runs_read():
    """Issue 49: one table of statistics; the claims model, the runs and the renderer read it."""
    from vhct.reporting.audit.runs import AUDITED_COLUMNS
    from vhct.reporting.audit.statistics import STATISTICS, said

    enum = claims_model.Claim.model_json_schema()["properties"]["statistic"]["enum"]
    assert enum == list(STATISTICS)
    for row in STATISTICS.values():
        assert set(row.columns) <= set(AUDITED_COLUMNS), row.name
    with pytest.raises(ValueError, match="unknown statistic 'ghost'"):
        said("ghost")
