"""The one registry idiom: a named, ordered table of entries (algorithms, objectives, figure kinds,
drawers, styles, claim kinds).

An entry is registered once under a new name (``register``: with the name and the entry; with one
class or object, under its ``name`` attribute, so usable as a class decorator; with a name alone,
a decorator registering what it decorates under that name), looked up by name with an error that
lists the known names, and may be given lazily as ``"module:attribute"`` (imported on first
lookup, so a registry of classes that pull in heavy extras stays cheap to import). Membership
never imports a lazy entry, nor does :meth:`Registry.target`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class UnknownName(KeyError, ValueError):
    """A name the registry does not hold (a ``KeyError`` for mappings, a ``ValueError`` for callers
    that check arguments); the message lists the known names."""

    def __str__(self) -> str:
        return str(self.args[0])


class Registry(Mapping[str, T], Generic[T]):
    """Name -> entry, in registration order.

    Args:
        what: what an entry is, for messages (``"algorithm"``, ``"claim kind"``).
        check: called with each entry's name and entry before it is used (raise to refuse it): when
            registered, or, for a lazy entry, when it is imported.
    """

    def __init__(self, what: str, check: Callable[[str, T], None] | None = None) -> None:
        self.what = what
        self._check = check
        self._entries: dict[str, T | str] = {}
        self._targets: dict[str, str] = {}

    def register(self, name: str | Any, entry: T | str | None = None) -> Any:
        """Add ``entry`` under ``name`` (a new name) and return it; called with one class or
        object, add it under its ``name`` attribute; called with a name alone, return a decorator
        that adds what it decorates under that name."""
        if entry is None:
            if isinstance(name, str):
                return lambda decorated: self.register(name, decorated)
            entry, name = name, name.name
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is already registered")
        if isinstance(entry, str):
            self._targets[name] = entry
        elif self._check is not None:
            self._check(name, entry)
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a temporary entry)."""
        del self._entries[self._known(name)]
        self._targets.pop(name, None)

    def lookup(self, name: str) -> T:
        """The entry of ``name``, imported now when lazy; an unknown name lists the known ones."""
        entry = self._entries[self._known(name)]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = getattr(importlib.import_module(module), attribute)
            if self._check is not None:
                self._check(name, entry)
            self._entries[name] = entry
        return entry

    __getitem__ = lookup

    def target(self, name: str) -> str | None:
        """The ``"module:attribute"`` a lazy entry was registered as (before and after it is
        imported), None for an entry registered as itself; nothing is imported."""
        return self._targets.get(self._known(name))

    def _known(self, name: str) -> str:
        """``name`` when registered, else :class:`UnknownName` listing the known names."""
        if not isinstance(name, str) or name not in self._entries:
            raise UnknownName(f"unknown {self.what} {name!r}; known: {', '.join(self._entries)}")
        return name

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._entries)})"
