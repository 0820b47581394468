"""The claims and questions files read as typed records (errors name the file and the key path), a
variant's settings substituted into a claim, and the claims' seeds checked against a config's caps."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ValidationError

from vhct.pipeline.config.errors import ConfigError, first_error
from vhct.reporting.audit.claims_model import Claim, ClaimsFile, Record
from vhct.reporting.audit.questions_model import BeyondFile
from vhct.resources import BEYOND, CLAIMS, CLAIMS_SCHEMA, resource_path

if TYPE_CHECKING:
    from vhct.pipeline.config import Config

#: the schema of the claims file (generated from the model) and the default claims file
SCHEMA_PATH = resource_path(CLAIMS_SCHEMA)
CLAIMS_PATH = resource_path(CLAIMS)
#: the questions beyond the paper
BEYOND_PATH = resource_path(BEYOND)

R = TypeVar("R", bound=Record)


class ClaimsError(ValueError):
    """A malformed claims file; the message names the file and the offending key path."""


def load_claims(path: Path | str = CLAIMS_PATH) -> ClaimsFile:
    """Read and validate a claims file: every claim gets its alpha, min_seeds, round and require."""
    return _read(Path(path), ClaimsFile, "claims file")


def load_beyond(path: Path | str = BEYOND_PATH) -> BeyondFile:
    """Read and validate the questions beyond the paper; each question gets the defaults it omits."""
    return _read(Path(path), BeyondFile, "beyond file")


def _read(path: Path, model: type[R], what: str) -> R:
    """The record of the YAML mapping at ``path``; errors name the file and the key path."""
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ClaimsError(f"{what} {path}: cannot be read as YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise ClaimsError(f"{what} {path}: does not hold a mapping")
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        where, text = _error(exc.errors(), doc, model)
        raise ClaimsError(f"{what} {path}: key {'/'.join(where) or '<root>'}: {text}") from None


def _error(errors: Sequence[dict[str, Any]], doc: Any, model: type[BaseModel]) -> tuple[list[str], str]:
    """The key path and the text of the most telling of pydantic's errors: an unknown key first,
    then one in ``defaults`` (which the claims inherit), then the deepest."""
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    defaults = [e for e in errors if e["loc"][:1] == ("defaults",)]
    path, message, error = first_error(unknown or defaults or errors, doc)
    if error["type"] == "extra_forbidden":
        allowed = sorted(_fields_at(model, path[:-1]))
        guess = difflib.get_close_matches(path[-1], allowed, n=1)
        hint = f"did you mean {guess[0]!r}? " if guess else ""
        return path, f"unknown key {path[-1]!r} ({hint}allowed: {', '.join(allowed)})"
    if error["type"] == "missing":
        return path, f"{error['loc'][-1]!r} is a required property"
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, ConfigError):  # raised by a validator: its key is relative to where it ran
        return [*path, *(cause.key or ())], cause.text
    if "input" in error and not isinstance(error["input"], dict | list):
        message += f", got {error['input']!r}"
    return path, message


def _fields_at(model: type[BaseModel], path: Sequence[str]) -> list[str]:
    """The keys the record at ``path`` (below ``model``) allows."""
    for part in path:
        if part.isdigit():
            continue
        annotation = model.model_fields[part].annotation
        nested = [a for a in _flatten(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not nested:
            return []
        model = nested[0]
    return list(model.model_fields)


def _flatten(annotation: Any) -> list[Any]:
    args = get_args(annotation)
    return [annotation] if not args else [a for arg in args for a in _flatten(arg)]


def substitute_settings(claim: Claim, substitute: Mapping[str, str]) -> Claim | None:
    """The claim with the variant's settings in place of the default's, or None if it names none."""
    if not set(claim.settings) & set(substitute):
        return None
    update: dict[str, Any] = {"target": substitute.get(claim.target, claim.target)}
    for key in ("claimed", "others"):
        if getattr(claim, key) is not None:
            update[key] = [substitute.get(s, s) for s in getattr(claim, key)]
    return claim.model_copy(update=update)


def left_out(claims: ClaimsFile, config: Config) -> dict[str, dict[str, str]]:
    """Per claim, the experiments of ``config`` it gets no verdict on, and why: their ``skip_claims``
    name it, or they are run otherwise than the paper ran them (``claims.conditions``)."""
    out: dict[str, dict[str, str]] = {}
    for claim in claims.claims:
        reasons = out.setdefault(claim.id, {})
        for name in claim.experiments_read:
            exp = config.experiments.get(name)
            if exp is None:
                continue
            departure = claims.conditions[name].departure(exp.objective, exp.objective_params, exp.noise)
            if claim.id in exp.skip_claims:
                reasons[name] = f"the config leaves this claim out of {name} (experiments/{name}/skip_claims)"
            elif departure:
                reasons[name] = f"this config runs {name} with {departure}: not the claim's experiment"
    return out


def capped_below_minimum(claims: ClaimsFile, config: Config) -> list[str]:
    """Where a cap of ``config`` runs a setting a claim reads (also under a variant) below the claim's
    ``min_seeds`` (``Claim.short_of_seeds``) while its experiment, not left out (:func:`left_out`),
    runs enough: a verdict our own configuration would make "not evaluated". One message each."""
    problems = []
    skipped = left_out(claims, config)
    readings = [(claim, claim.settings, "") for claim in claims.claims]
    for choice in claims.sensitivity:  # a variant setting stands in for the default's
        for claim in claims.claims:
            variant = substitute_settings(claim, choice.substitute)
            if variant is not None:
                named = [s for s in variant.settings if s in choice.substitute.values()]
                readings.append((variant, named, f" (its sensitivity to {choice.id})"))
    for claim, settings, what in readings:
        needed = claim.min_seeds
        for experiment in claim.experiments_read:
            exp = config.experiments.get(experiment)
            if exp is None or experiment in skipped[claim.id] or len(config.seeds(experiment)) < needed:
                continue
            read = [s for s in settings if s in exp.settings]
            seeds = {s: len(config.setting_seeds(experiment, s)) for s in read}
            horizons = {s: config.run_horizon(experiment, s) for s in read}
            for setting, runs in claim.short_of_seeds(seeds, horizons, exp.horizon).items():
                key = config.cap_key(experiment, setting, "max_seeds")
                problems.append(
                    f"claim {claim.id}{what} reads setting {setting} on experiment {experiment}, "
                    f"which runs {runs} seeds there (cap {key}: {runs}), below the claim's min_seeds "
                    f"{needed} while the experiment runs {len(config.seeds(experiment))}: raise the "
                    f"cap, or leave the claim out of the experiment "
                    f"(experiments/{experiment}/skip_claims: [{claim.id}])"
                )
    return problems


def check_claim_seeds(claims: ClaimsFile, config: Config) -> None:
    """Refuse, before any job, a config that :func:`capped_below_minimum` finds (a ClaimsError)."""
    problems = capped_below_minimum(claims, config)
    if problems:
        raise ClaimsError(
            "the config caps settings below the seeds the claims need (the audit could not decide "
            "them):\n  - " + "\n  - ".join(problems)
        )
