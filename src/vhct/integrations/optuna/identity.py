"""Which study a sampler drives: a study told apart by its storage and its id there, not by its
name (one sampler drives one study: the package's docstring)."""

from __future__ import annotations

import os
from typing import Any

import optuna
from optuna.storages import BaseStorage, JournalStorage, RDBStorage
from optuna.trial import FrozenTrial, TrialState

#: the URL prefix of an SQLite database whose path is made absolute
SQLITE_PREFIX = "sqlite:///"


def study_identity(study: optuna.Study) -> tuple[Any, int]:
    """What tells a study apart: its storage (see :func:`storage_identity`) and its id there."""
    return storage_identity(study._storage), study._study_id


def storage_identity(storage: BaseStorage) -> Any:
    """A storage as the same data: a database by its URL (SQLite: by its absolute path), a journal
    file by its absolute path; any other (in memory, a server) by the object itself."""
    if isinstance(storage, JournalStorage):
        path = getattr(storage._backend, "_file_path", None)
        return storage if path is None else ("journal file", os.path.abspath(path))
    storage = getattr(storage, "_backend", storage)  # a database storage comes wrapped in a cache
    if isinstance(storage, RDBStorage):
        url = storage.url
        if url.startswith(SQLITE_PREFIX) and url[len(SQLITE_PREFIX) :] not in ("", ":memory:"):
            url = SQLITE_PREFIX + os.path.abspath(url[len(SQLITE_PREFIX) :])
        return ("database", url)
    return storage


def storage_label(identity: Any) -> str:
    """A storage identity as words, for messages."""
    if isinstance(identity, tuple):
        return f"{identity[0]} {identity[1]}"
    return f"{type(identity).__name__} at {id(identity):#x}"


def study_label(study: optuna.Study, identity: tuple[Any, int]) -> str:
    """The study named for messages: its name, id and storage."""
    return f"{study.study_name!r} (id {study._study_id} in {storage_label(identity[0])})"


def refuse_trial(study: optuna.Study, trial: FrozenTrial) -> None:
    """Mark FAIL the trial Optuna just created for a refused study (it would stay RUNNING)."""
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
