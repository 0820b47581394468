"""Two audit JSONs compared field by field: a refactor that should move no number shows none.

    PYTHONPATH=src python benchmarks/audit_compare.py BEFORE.json AFTER.json

Every value of both files is flattened to a path (claims, experiments, comparisons, sensitivity rows
and questions keyed by their ids, not their positions; a record that embeds its claim, choice or
question is read through it, so an audit written before the records embedded them compares with one
written after); prints each path whose value differs (numbers beyond a relative 1e-12), each path
only one side has, then ``N fields, M differ``. Exits 1 when any field differs.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: relative tolerance of two numbers read as equal (a JSON round trip of the same float is exact)
RTOL = 1e-12
#: keys of a list's items that identify them, first found wins
ID_KEYS = ("id", "claim", "choice", "question", "label", "experiment", "statement")
#: fields of a record that are its embedded claim, choice or question (flattened into it)
EMBEDDED = ("claim", "choice", "question")
#: fields one format derives or copies from another record (a claim's variants, from the sensitivity
#: section), not compared
SKIPPED = ("sensitivity", "format")


def _key(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in ID_KEYS:
            value = item.get(key)
            if isinstance(value, dict):  # an embedded record: its id
                value = value.get("id")
            if isinstance(value, str):
                return value
    return str(index)


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, leaf) of every value; embedded records flattened into the record that holds them."""
    if isinstance(value, dict):
        merged = dict(value)
        for key in EMBEDDED:
            inner = merged.get(key)
            if isinstance(inner, dict):
                merged.pop(key)
                merged = {**{k: v for k, v in inner.items() if k not in merged}, **merged}
        for key, item in merged.items():
            if key in SKIPPED and (path == "" or path.startswith("claims[")):
                continue
            yield from flatten(item, f"{path}/{key}" if path else key)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            yield from flatten(item, f"{path}[{_key(item, i)}]")
    else:
        yield path, value


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return a == b or math.isclose(a, b, rel_tol=RTOL)
    return a == b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    args = parser.parse_args(argv)
    before, after = (
        dict(flatten(json.loads(Path(p).read_text(encoding="utf-8")))) for p in (args.before, args.after)
    )
    differ = 0
    for path in sorted(before.keys() | after.keys()):
        if path not in before or path not in after:
            # a field only one side carries (an embedded claim's experiment list, its unset thresholds)
            side, value = ("after", after[path]) if path not in before else ("before", before[path])
            if value is not None:
                print(f"only {side}: {path} = {value!r}")
            continue
        if not same(before[path], after[path]):
            differ += 1
            print(f"differs: {path}: {before[path]!r} -> {after[path]!r}")
    print(f"{len(before.keys() & after.keys())} fields, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
