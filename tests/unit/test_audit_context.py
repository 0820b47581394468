"""Writer to reader: the audit's context (``vhct.reporting.audit_job.audit_context``) of a real
config, written in the audit JSON by its one writer and read back by the one reader and the renderer."""

from __future__ import annotations

import json

import pytest
from support import REPO, TINY

from vhct.pipeline.config import load, validate_config
from vhct.pipeline.files import display_path
from vhct.reporting.audit.claims import load_claims
from vhct.reporting.audit.evaluate import run_audit
from vhct.reporting.audit.records import AUDIT_FORMAT, AuditRecordError, audit_json, parse_audit
from vhct.reporting.audit_job import audit_context
from vhct.reporting.render import headline, render_markdown, scale_items, seeds_span

CLAIMS = REPO / "config" / "claims.yaml"


def audit_data(config: dict) -> dict:
    """The audit JSON (as the audit job writes it) of no runs, with the context of ``config``."""
    claims = load_claims(CLAIMS)
    context = audit_context(validate_config(config), claims, CLAIMS, [TINY])
    audit = run_audit(claims.model_copy(update={"claims": []}), {}, context)
    return json.loads(audit_json(audit))


def test_the_context_of_a_real_config_reaches_the_renderer_as_the_config_computes_it():
    config = load([TINY])[0].as_dict()
    config["experiments"]["garland"]["caps"] = {"short": {"max_horizon": 40, "max_seeds": 1}}
    typed = validate_config(config)
    audit = parse_audit(audit_data(config), "audit.json")
    audited = [e for e in load_claims(CLAIMS).experiments if e in typed.experiments]
    assert audited and list(audit.context.experiments) == audited
    for name, exp in audit.context.experiments.items():
        assert exp == typed.experiment_info(name)  # the record the figures read, the same numbers
    garland = audit.context.experiments["garland"]
    assert (garland.settings["short"].seeds, garland.settings["short"].horizon) == ([0], 40)
    assert audit.context.configfiles == [display_path(TINY)]
    assert audit.context.claims_sha256 is not None and len(audit.discrepancies) >= 1
    md = render_markdown(audit)
    row = f"| garland | garland | {garland.noise:.4g} | {garland.horizon} | {len(garland.seeds)} |"
    assert row in md and "short (max 40 rounds)" in md
    fewer = scale_items(audit)["fewer"]
    assert {"setting": "short", "count": 1, "where": ["garland"]} in fewer


def test_the_headline_names_each_setting_that_ran_fewer_seeds_and_where():
    config = load([TINY])[0].as_dict()
    plain = parse_audit(audit_data(config))
    assert headline(plain).startswith(f"At {seeds_span(plain)} seeds per curve, of the paper's ")
    config["experiments"]["garland"]["caps"] = {"short": {"max_seeds": 1}}
    config["experiments"]["counterexample"]["caps"] = {
        s: {"max_seeds": 1} for s in config["experiments"]["counterexample"]["settings"][:1]
    }
    capped = parse_audit(audit_data(config))
    first = config["experiments"]["counterexample"]["settings"][0]
    assert {"garland", "counterexample"} <= set(capped.context.experiments)
    notes = f"short: 1 on garland; {first}: 1 on counterexample"
    start = f"At {seeds_span(capped)} seeds per curve ({notes}), of the paper's "
    assert headline(capped).startswith(start)


def test_a_context_missing_a_required_field_is_refused_naming_it():
    data = audit_data(load([TINY])[0].as_dict())
    del data["context"]["experiments"]["garland"]["settings"]["short"]["seeds"]
    missing = r"audit\.json: context/experiments/garland/settings/short/seeds: Field required"
    with pytest.raises(AuditRecordError, match=missing):
        parse_audit(data, "audit.json")
    data = audit_data(load([TINY])[0].as_dict())
    del data["context"]["experiments"]
    with pytest.raises(AuditRecordError, match=r"audit\.json: context/experiments: Field required"):
        parse_audit(data, "audit.json")


def test_an_audit_of_the_former_format_is_refused_as_before():
    data = audit_data(load([TINY])[0].as_dict())
    data["format"] = AUDIT_FORMAT - 1
    refused = rf"audit format {AUDIT_FORMAT - 1}, but this renderer needs format {AUDIT_FORMAT}: re-run"
    with pytest.raises(AuditRecordError, match=refused):
        parse_audit(data, "audit.json")


def test_settings_that_ran_more_seeds_than_the_paper_are_said_once_and_capped_ones_not_as_fewer():
    """paper-local runs the comparisons the power analysis named at more seeds than the paper's 20
    (the claims' minimum) and caps the others at 20: the findings say so once, and a cap at the
    paper's count is not listed as a setting that ran fewer seeds."""
    config = load([TINY])[0].as_dict()
    config["experiments"]["garland"]["seeds"] = 30
    config["experiments"]["garland"]["caps"] = {"short": {"max_seeds": 20}}
    claims = load_claims(CLAIMS)
    context = audit_context(validate_config(config), claims, CLAIMS, [TINY])
    audit = run_audit(claims, {}, context)
    paper = max(c.claim.min_seeds for c in audit.claims)
    assert audit.paper_seeds == paper  # the record's own reading of the paper's scale
    items = scale_items(audit)
    more = [item for item in items["more"] if item["name"] == "garland"]
    assert len(more) == 1 and more[0]["paper"] == paper == 20
    assert "short" not in more[0]["settings"] and set(more[0]["settings"].values()) == {30}
    assert not [item for item in items["fewer"] if item["setting"] == "short"]


def test_the_headline_says_in_one_clause_which_settings_ran_more_seeds_than_the_paper():
    config = load([TINY])[0].as_dict()
    for name in ("garland", "counterexample"):
        config["experiments"][name]["seeds"] = 100
    config["experiments"]["garland"]["caps"] = {"short": {"max_seeds": 20}, "POO": {"max_seeds": 60}}
    claims = load_claims(CLAIMS)
    audit = run_audit(claims, {}, audit_context(validate_config(config), claims, CLAIMS, [TINY]))
    more = {
        (e, s)
        for e in ("garland", "counterexample")
        for s, i in audit.context.experiments[e].settings.items()
        if len(i.seeds) > 20
    }
    text = headline(audit)
    # the largest count, not each count (issue 50: every setting's seeds are the findings' table)
    clause = f"(the paper's 20; up to 100 for {len({s for _, s in more})} settings on 2 experiments, where"
    assert clause in text and "60" not in text
    assert "short: 20" not in text  # a cap at the paper's count is no departure
