"""The one registry idiom: a named, ordered table of entries (algorithms, objectives, figure kinds,
styles, claim kinds).

An entry is registered once under a new name (``register``; usable as a class decorator for a
class with a ``name``), looked up by name with an error that lists the known names, and may be
given lazily as ``"module:attribute"`` (imported on first lookup, so a registry of classes that
pull in heavy extras stays cheap to import). Membership never imports a lazy entry.
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
        check: called with each new entry before it is added (raise to refuse it).
    """

    def __init__(self, what: str, check: Callable[[str, T], None] | None = None) -> None:
        self.what = what
        self._check = check
        self._entries: dict[str, T | str] = {}

    def register(self, name: str | Any, entry: T | str | None = None) -> Any:
        """Add ``entry`` under ``name`` (a new name), or, called with one class or object, add it
        under its ``name`` attribute (a class decorator); returns the entry."""
        if entry is None:
            entry, name = name, name.name
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is already registered")
        if not isinstance(entry, str) and self._check is not None:
            self._check(name, entry)
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a temporary entry)."""
        self.lookup(name)
        del self._entries[name]

    def lookup(self, name: str) -> T:
        """The entry of ``name``, imported now when lazy; an unknown name lists the known ones."""
        if not isinstance(name, str) or name not in self._entries:
            raise UnknownName(f"unknown {self.what} {name!r}; known: {', '.join(self._entries)}")
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = self._entries[name] = getattr(importlib.import_module(module), attribute)
        return entry

    __getitem__ = lookup

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}: {', '.join(self._entries)})"
