"""The one registry idiom: a named, ordered table of entries (algorithms, objectives, figure kinds,
drawers, styles, claim kinds).

An entry is registered once under a new name (``register``: with the name and the entry; with one
class or object, under its ``name`` attribute, so usable as a class decorator; with a name alone,
a decorator registering what it decorates under that name), looked up by name with an error that
lists the known names, and may be given lazily as ``"module:attribute"`` (imported on first
lookup, so a registry of classes that pull in heavy extras stays cheap to import). Membership
never imports a lazy entry, nor does :meth:`Registry.target`.

A registry may also take entries from other installed packages: given an entry-point group
(``plugins``), it reads the group's entry points (``importlib.metadata``) when it is first read
(looked up, iterated, asked for a name), after the entries registered in code, in the entry
points' name order. Each entry point names a ``"module:attribute"``, registered lazily under the
entry point's name. A name that is already taken, or a target that is not ``"module:attribute"``
or does not import, is a one-line :class:`PluginError` naming the entry point and its distribution.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")

#: what a lazy target looks like: ``"module:attribute"``
TARGET_FORM = "'module:attribute'"


class PluginError(ValueError):
    """An entry point a registry cannot take: its name is taken, or its target is malformed or does
    not import. The one-line message names the entry point and its distribution."""


def entry_point_origin(entry_point: Any) -> str:
    """``entry point 'name = module:attr' (group g) of distribution d 1.0``, for messages."""
    dist = entry_point.dist
    owner = f"distribution {dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    return f"entry point '{entry_point.name} = {entry_point.value}' (group {entry_point.group}) of {owner}"


def import_target(target: str, package: str | None = None, origin: str | None = None) -> Any:
    """Import ``"module:attribute"`` (the module relative to ``package`` when it starts with a dot).

    With an ``origin`` (an entry point's, :func:`entry_point_origin`), any failure is a one-line
    :class:`PluginError` naming the target and the origin: the code behind it is not this package's.
    """
    module, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module, package), attribute)
    except Exception as exc:
        if origin is None:
            raise
        first = (str(exc).strip().splitlines() or [""])[0]
        raise PluginError(
            f"cannot import {target!r}, named by {origin}: {type(exc).__name__}: {first}"
        ) from exc


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
        plugins: an entry-point group whose entry points are added when the registry is first read.
        plugin: makes the entry of an entry point from its name, target and origin (default: the
            target itself, a lazy entry).
    """

    def __init__(
        self,
        what: str,
        check: Callable[[str, T], None] | None = None,
        plugins: str | None = None,
        plugin: Callable[[str, str, str], T | str] | None = None,
    ) -> None:
        self.what = what
        self._check = check
        self._registered: dict[str, T | str] = {}
        self._targets: dict[str, str] = {}
        #: name -> the entry point it came from (plugins only)
        self._origins: dict[str, str] = {}
        self._plugin_group = plugins
        self._plugin = plugin
        self._plugins_read = plugins is None

    @property
    def _entries(self) -> dict[str, T | str]:
        """The entries, the plugins' included (read now, on first use)."""
        if not self._plugins_read:
            self._read_plugins()
        return self._registered

    def _read_plugins(self) -> None:
        """Register the entry points of the plugin group, all or none: a bad one is a PluginError
        (raised again on every read until it is fixed)."""
        from importlib.metadata import entry_points

        found: dict[str, tuple[str, str]] = {}
        for point in sorted(entry_points(group=self._plugin_group), key=lambda p: p.name):
            origin = entry_point_origin(point)
            module, colon, attribute = point.value.partition(":")
            if not (module and colon and attribute.isidentifier()):
                raise PluginError(f"{origin}: the target must be {TARGET_FORM}")
            if point.name in self._registered:
                raise PluginError(
                    f"{origin} names {self.what} {point.name!r}, which is already registered: "
                    "rename the entry point"
                )
            if point.name in found:
                raise PluginError(
                    f"{origin} names {self.what} {point.name!r}, which {found[point.name][1]} names too: "
                    "rename one of them"
                )
            found[point.name] = (point.value, origin)
        for name, (target, origin) in found.items():
            self._add(name, self._plugin(name, target, origin) if self._plugin is not None else target)
            self._origins[name] = origin
        self._plugins_read = True

    def origin(self, name: str) -> str | None:
        """The entry point ``name`` came from (:func:`entry_point_origin`), None for an entry
        registered in code."""
        return self._origins.get(self._known(name))

    def register(self, name: str | Any, entry: T | str | None = None) -> Any:
        """Add ``entry`` under ``name`` (a new name) and return it; called with one class or
        object, add it under its ``name`` attribute; called with a name alone, return a decorator
        that adds what it decorates under that name."""
        if entry is None:
            if isinstance(name, str):
                return lambda decorated: self.register(name, decorated)
            entry, name = name, name.name
        if name in self._registered:
            raise ValueError(f"{self.what} {name!r} is already registered")
        return self._add(name, entry)

    def _add(self, name: str, entry: T | str) -> T | str:
        """Hold ``entry`` under ``name`` (checked now unless lazy)."""
        if isinstance(entry, str):
            self._targets[name] = entry
        elif self._check is not None:
            self._check(name, entry)
        self._registered[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (tests that register a temporary entry)."""
        del self._entries[self._known(name)]
        self._targets.pop(name, None)
        self._origins.pop(name, None)

    def lookup(self, name: str) -> T:
        """The entry of ``name``, imported now when lazy; an unknown name lists the known ones."""
        entry = self._entries[self._known(name)]
        if isinstance(entry, str):
            entry = import_target(entry, origin=self._origins.get(name))
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
        return f"Registry({self.what!r}: {', '.join(self._registered)})"
