"""One config per output folder: the config that wrote a folder of results owns it, and another
config that would write it differently is refused, naming both.

A config's outputs go to its folder (``output``, by default its file's name: ``results/tiny``). A
second config file may name the same folder (``output: tiny``); if its effective config (every key,
defaults filled in, its base's merged in; ``base`` itself aside) differs from the owner's, its runs,
aggregates and audit would overwrite the owner's with other numbers, so it is refused before any job
runs. The owner is recorded in the folder (:data:`OWNER_FILE`: the config file and the sha256 of its
effective config); the same file, edited, stays the owner (its reruns replace what changed), and a
file whose effective config is the owner's writes the same outputs and is let through.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.loading import BASE_KEY
from vhct.pipeline.files import atomic_paths, display_path
from vhct.pipeline.layout import OWNER_FILE, RESULTS_ROOT

#: the owner record in a config's results folder
#: the root whose folder holds the record (the results: runs, aggregates, audit)
OWNER_ROOT = RESULTS_ROOT


def effective_sha256(source: dict[str, Any]) -> str:
    """The sha256 of a config's effective content (``base`` aside: where its keys came from does not
    change what it writes)."""
    content = {k: v for k, v in source.items() if k != BASE_KEY}
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()


def _owner(folder: Path) -> dict[str, str] | None:
    path = folder / OWNER_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: cannot read the folder's owner record ({exc}); remove it to reclaim"
        ) from exc
    if not isinstance(data, dict) or not {"config", "sha256"} <= set(data):
        raise ConfigError(f"{path}: not an owner record (config, sha256); remove it to reclaim the folder")
    return data


def check_owner(folder: Path | str, files: Sequence[Path | str], source: dict[str, Any]) -> bool:
    """Refuse (a :class:`ConfigError` naming both configs) a config that would write ``folder``
    differently from the config that owns it; whether the record must be (re)written."""
    folder, leaf = Path(folder), Path(files[-1])
    owner = _owner(folder)
    if owner is None:
        return True
    same_file = Path(owner["config"]).resolve() == leaf.resolve()
    if same_file:
        return owner["sha256"] != effective_sha256(source)
    if owner["sha256"] != effective_sha256(source):
        raise ConfigError(
            f"{display_path(leaf)}: writes its outputs to {folder}, which holds those of {owner['config']}, "
            "and would write them differently (the two configs differ): give it an `output:` folder of "
            f"its own, or remove {folder} first"
        )
    return False


def claim_owner(folder: Path | str, files: Sequence[Path | str], source: dict[str, Any]) -> None:
    """:func:`check_owner`, then record this config as the folder's owner (when it is new or edited)."""
    folder = Path(folder)
    if check_owner(folder, files, source):
        folder.mkdir(parents=True, exist_ok=True)
        record = {"config": display_path(files[-1]), "sha256": effective_sha256(source)}
        with atomic_paths(folder / OWNER_FILE) as (tmp,):
            Path(tmp).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
