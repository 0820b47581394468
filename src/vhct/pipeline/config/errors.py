"""The config's error: one line naming the key path (and, once located, the file and line)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

#: the keys a config must have; named when the whole file is off
REQUIRED_SECTIONS = ("settings", "experiments", "figures")
#: said when a config file lacks a section: users may expect the default config to fill it in
NOT_MERGED = (
    "the default config/config.yaml is used only when no config file is given; it is not merged with yours"
)


class ConfigError(ValueError):
    """An invalid configuration; the message names the key path (and the file and line when known).

    ``key`` is the key path as a tuple (``()`` for the top level, None when no key is concerned).
    """

    def __init__(self, message: str, key: Sequence[str] | None = None, text: str | None = None):
        super().__init__(message)
        self.key = None if key is None else tuple(str(k) for k in key)
        #: what is wrong, without the key (a validator's error is re-keyed from where it ran)
        self.text = message if text is None else text


def key_error(key: Sequence[str] | str, text: str) -> ConfigError:
    """A ConfigError ``config key a/b/c: text`` (``key`` as parts or as ``"a/b/c"``)."""
    parts = [p for p in key.split("/") if p] if isinstance(key, str) else [str(p) for p in key]
    return ConfigError(f"config key {'/'.join(parts) or '<root>'}: {text}", parts, text)


def _type_name(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}.get(
        type(value), f"a {type(value).__name__}"
    )


def key_path(loc: Sequence[Any], data: Any) -> list[str]:
    """The key path of pydantic's ``loc`` in ``data``: the parts that are keys or indices of the input
    (pydantic adds the names of union members and ``[key]``, which are not)."""
    path = []
    for part in loc:
        in_dict = isinstance(data, dict) and part in data
        if in_dict or (isinstance(data, list) and isinstance(part, int) and part < len(data)):
            data = data[part]
        else:
            continue
        path.append(str(part))
    return path


def first_error(errors: Sequence[dict[str, Any]], data: Any) -> tuple[list[str], str, dict[str, Any]]:
    """The key path, the message and the error of pydantic's first error at the deepest key (in a
    union, the member that got furthest); the messages of the errors at that key joined with "or"."""
    deepest = max(len(key_path(e["loc"], data)) for e in errors)
    errors = [e for e in errors if len(key_path(e["loc"], data)) == deepest]
    path = key_path(errors[0]["loc"], data)
    same = [e for e in errors if key_path(e["loc"], data) == path and not e.get("ctx", {}).get("error")]
    texts = list(dict.fromkeys(e["msg"].removeprefix("Value error, ") for e in same or errors[:1]))
    texts = texts[:1] + [t.removeprefix("Input should be ") for t in texts[1:]]
    return path, " or ".join(texts), errors[0]


def validation_error(errors: Sequence[dict[str, Any]], allowed_at: Any, data: Any = None) -> ConfigError:
    """One ConfigError for pydantic's errors (``ValidationError.errors()``): the most telling one.

    An unknown key (a typo) explains a missing key beside it better than the reverse, so unknown
    keys come first; missing top-level sections are named together. ``allowed_at(path)`` gives the
    keys allowed at a key path (for "did you mean").
    """
    unknown = [e for e in errors if e["type"] == "extra_forbidden"]
    missing_root = [e["loc"][0] for e in errors if e["type"] == "missing" and len(e["loc"]) == 1]
    if not unknown and missing_root:
        return key_error((), f"missing top-level key(s) {', '.join(map(str, missing_root))} ({NOT_MERGED})")
    path, message, error = first_error(unknown or errors, data)
    if error["type"] == "extra_forbidden":
        key, allowed = path[-1], sorted(allowed_at(path[:-1]))
        guess = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean {guess[0]!r}? " if guess else ""
        extra = " or a name starting with 'x-'" if len(path) == 1 else ""
        return key_error(path, f"unknown key {key!r} ({hint}allowed: {', '.join(allowed)}{extra})")
    if error["type"] == "missing":
        return key_error(path, f"missing key {error['loc'][-1]!r}")
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, ConfigError):  # raised by a validator: its key is relative to where it ran
        return key_error([*path, *(cause.key or ())], cause.text)
    if error["type"].endswith("_type") and "input" in error:
        message += f", got {_type_name(error['input'])} {error['input']!r}"
    elif "input" in error and not isinstance(error["input"], dict | list):
        message += f", got {error['input']!r}"
    return key_error(path, message)
