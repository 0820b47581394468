"""The claims file: read, validate against the packaged schema, resolve defaults, substitute the
settings of an implementation choice's variant."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from vhct.resources import BEYOND, BEYOND_SCHEMA, CLAIMS, CLAIMS_SCHEMA, resource_path

if TYPE_CHECKING:
    from vhct.pipeline.config import Config

#: the schema of the claims file and the default claims file
SCHEMA_PATH = resource_path(CLAIMS_SCHEMA)


CLAIMS_PATH = resource_path(CLAIMS)
#: the questions beyond the paper (issue 22) and their schema
BEYOND_PATH = resource_path(BEYOND)
BEYOND_SCHEMA_PATH = resource_path(BEYOND_SCHEMA)


class ClaimsError(ValueError):
    """A malformed claims file; the message names the file and the offending key path."""


def load_claims(path: Path | str = CLAIMS_PATH, schema_path: Path | str = SCHEMA_PATH) -> dict[str, Any]:
    """Read, validate and resolve a claims file: every claim gets its test, alpha, min_seeds and round."""
    path = Path(path)
    doc = _validated(path, schema_path, "claims file")
    _check_semantics(doc, path)
    resolved = copy.deepcopy(doc)
    resolved.setdefault("sensitivity", [])
    for claim in resolved["claims"]:
        for key in ("alpha", "min_seeds", "round", "require"):
            claim.setdefault(key, doc["defaults"][key])
    return resolved


def _validated(path: Path, schema_path: Path | str, what: str) -> dict[str, Any]:
    """The YAML mapping at ``path``, valid against the schema; errors name the file and key path."""
    import jsonschema

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"{what} {path}: cannot be read as YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ClaimsError(f"{what} {path}: does not hold a mapping")
    schema = yaml.safe_load(Path(schema_path).read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        raise ClaimsError(f"{what} {path}: key {where}: {error.message}")
    return doc


def load_beyond(
    path: Path | str = BEYOND_PATH, schema_path: Path | str = BEYOND_SCHEMA_PATH
) -> dict[str, Any]:
    """Read and validate the questions beyond the paper; each question gets the defaults it omits.

    A question's ``a`` and ``b`` must differ and ids must be unique; errors name the key.
    """
    path = Path(path)
    doc = _validated(path, schema_path, "beyond file")
    resolved = copy.deepcopy(doc)
    seen: set[str] = set()
    for i, q in enumerate(resolved["questions"]):
        if q["id"] in seen:
            raise ClaimsError(f"beyond file {path}: key questions/{i}/id: duplicate id {q['id']!r}")
        seen.add(q["id"])
        if q["a"] == q["b"]:
            raise ClaimsError(f"beyond file {path}: key questions/{i}/b: the same setting as a ({q['a']!r})")
        for key, value in doc["defaults"].items():
            q.setdefault(key, copy.deepcopy(value))
    return resolved


def beyond_experiments(beyond: Mapping[str, Any]) -> list[str]:
    """Every experiment some question reads, in first-use order."""
    return list(dict.fromkeys(e for q in beyond["questions"] for e in q["experiments"]))


def _check_semantics(doc: Mapping[str, Any], path: Path) -> None:
    """What the schema cannot say: unique ids, a rule for every kind used, no setting listed twice."""
    for section in ("claims", "discrepancies", "sensitivity"):
        seen: set[str] = set()
        for i, item in enumerate(doc.get(section, [])):
            if item["id"] in seen:
                raise ClaimsError(f"claims file {path}: key {section}/{i}/id: duplicate id {item['id']!r}")
            seen.add(item["id"])
    for i, choice in enumerate(doc.get("sensitivity", [])):
        same = sorted(k for k, v in choice["substitute"].items() if k == v)
        if same:
            raise ClaimsError(
                f"claims file {path}: key sensitivity/{i}/substitute: a setting substituted by itself: {same}"
            )
    for i, claim in enumerate(doc["claims"]):
        key = f"claims/{i}"
        if claim["kind"] not in doc["rules"]:
            raise ClaimsError(f"claims file {path}: key {key}/kind: no rule text for kind {claim['kind']!r}")
        named = [claim.get("target")] if "target" in claim else []
        named += list(claim.get("claimed", [])) + list(claim.get("others", []))
        twice = sorted({s for s in named if named.count(s) > 1})
        if twice:
            raise ClaimsError(f"claims file {path}: key {key}: settings listed twice: {twice}")
        points = claim.get("checkpoints")
        if points is not None and any(b <= a for a, b in zip(points, points[1:], strict=False)):
            raise ClaimsError(f"claims file {path}: key {key}/checkpoints: must increase, got {points}")
        if claim["kind"] == "sublinear" and claim.get("others"):
            raise ClaimsError(
                f"claims file {path}: key {key}/others: a sublinear check reads only its target"
            )
        if claim["kind"] == "contrast" and len(claim.get("others", [])) != 1:
            raise ClaimsError(
                f"claims file {path}: key {key}/others: a contrast names exactly one other setting"
            )
        th = claim["thresholds"]
        if claim["kind"] == "similar" and th["lower_ratio"] >= th["upper_ratio"]:
            raise ClaimsError(
                f"claims file {path}: key {key}/thresholds: lower_ratio must be below upper_ratio"
            )
        if claim["kind"] == "greater" and th.get("refuted_below", th["min_ratio"]) > th["min_ratio"]:
            raise ClaimsError(f"claims file {path}: key {key}/thresholds: refuted_below exceeds min_ratio")


def claims_experiments(claims: Mapping[str, Any]) -> list[str]:
    """Every experiment some claim reads, in first-use order."""
    return list(dict.fromkeys(e for claim in claims["claims"] for e in claim["experiments"]))


#: claim keys that name settings (substituted under a variant)
SETTING_KEYS = ("target", "claimed", "others")


def substitute_settings(claim: Mapping[str, Any], substitute: Mapping[str, str]) -> dict[str, Any] | None:
    """The claim with the variant's settings in place of the default's, or None if it names none of them."""
    named = [claim.get("target")] + list(claim.get("claimed", [])) + list(claim.get("others", []))
    if not set(named) & set(substitute):
        return None
    variant = copy.deepcopy(dict(claim))
    for key in SETTING_KEYS:
        if key == "target" and key in variant:
            variant[key] = substitute.get(variant[key], variant[key])
        elif key in variant:
            variant[key] = [substitute.get(s, s) for s in variant[key]]
    return variant


def claim_settings(claim: Mapping[str, Any]) -> list[str]:
    """The settings a claim reads (its target, claimed and other settings), in order, once each."""
    named = [claim.get("target"), *claim.get("claimed", []), *claim.get("others", [])]
    return list(dict.fromkeys(s for s in named if s is not None))


def claim_experiments_of(claim: Mapping[str, Any]) -> list[str]:
    """The experiments a claim reads: its ``experiments``, or both sides of its ``pairs``."""
    pairs = [e for pair in claim.get("pairs", []) for e in pair]
    return list(dict.fromkeys([*claim.get("experiments", []), *pairs]))


def capped_below_minimum(claims: Mapping[str, Any], config: Config) -> list[str]:
    """Each (claim, experiment, setting) where a cap of ``config`` (a setting's ``max_seeds`` or an
    experiment's ``caps``) runs a setting the claim reads on fewer seeds than the claim's
    ``min_seeds`` while the experiment itself runs enough, and the experiment does not leave the
    claim out (``skip_claims``): such a cap would turn a verdict into "not evaluated" by our own
    configuration, so the config is refused before any job (the message names claim, setting, cap).

    A setting that stops before the experiment's horizon is not read by a claim about the final
    round, so its seeds do not count there.
    """
    problems = []
    readings = [(claim, claim_settings(claim), "") for claim in claims["claims"]]
    for choice in claims.get("sensitivity", []):  # a variant setting stands in for the default's
        for claim in claims["claims"]:
            variant = substitute_settings(claim, choice["substitute"])
            if variant is not None:
                named = [s for s in claim_settings(variant) if s in choice["substitute"].values()]
                readings.append((variant, named, f" (its sensitivity to {choice['id']})"))
    for claim, settings, what in readings:
        needed = int(claim["min_seeds"])
        for experiment in claim_experiments_of(claim):
            exp = config.experiments.get(experiment)
            if exp is None or claim["id"] in exp.skip_claims or len(config.seeds(experiment)) < needed:
                continue
            for setting in settings:
                if setting not in exp.settings:
                    continue
                if claim["round"] == "final" and config.run_horizon(experiment, setting) < exp.horizon:
                    continue
                runs = len(config.setting_seeds(experiment, setting))
                if runs < needed:
                    key = config.cap_key(experiment, setting, "max_seeds")
                    problems.append(
                        f"claim {claim['id']}{what} reads setting {setting} on experiment {experiment}, "
                        f"which runs {runs} seeds there (cap {key}: {runs}), below the claim's min_seeds "
                        f"{needed} while the experiment runs {len(config.seeds(experiment))}: raise the "
                        f"cap, or leave the claim out of the experiment "
                        f"(experiments/{experiment}/skip_claims: [{claim['id']}])"
                    )
    return problems


def check_claim_seeds(claims: Mapping[str, Any], config: Config) -> None:
    """Refuse a config whose caps run a setting a claim reads below the claim's minimum
    (:func:`capped_below_minimum`); a ClaimsError lists each claim, setting and cap."""
    problems = capped_below_minimum(claims, config)
    if problems:
        raise ClaimsError(
            "the config caps settings below the seeds the claims need (the audit could not decide "
            "them):\n  - " + "\n  - ".join(problems)
        )

