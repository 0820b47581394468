"""Reading config files: YAML with keys given twice refused, ``base:`` chains merged, keys located.

Every error names the file and line: YAML's own errors by their mark, a key given twice (also as
``key`` beside ``key+`` or ``key!``) by both lines, and a model error (a key path) by the file and
line where the offending value was written, a base's or the config's own (:class:`Origins`, kept
through the merge). A file that is not UTF-8, or whose aliases would expand beyond
:data:`MAX_EXPANDED_NODES` values (a "billion laughs" of anchors nested in each other) or into
themselves, is refused before it is built.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from vhct.pipeline.config.errors import NOT_MERGED, REQUIRED_SECTIONS, ConfigError, key_error
from vhct.pipeline.config.model import Config, output_problem
from vhct.pipeline.config.plan import PLAN_KEY, load_plan, provisional, resolved

#: key of a config file naming the config file it extends (its keys are read first)
BASE_KEY = "base"
#: key naming the folder of a config's outputs (results/<output>/, figures/<output>/, logs/<output>/)
OUTPUT_KEY = "output"
#: the config read when no config file is given (relative to the checkout); a config file of its
#: name writes to results/, figures/ and logs/ themselves (an empty ``output``)
DEFAULT_CONFIG = Path("config") / "config.yaml"
#: values (scalars, lists, mappings, keys) a config file may hold once its YAML aliases are expanded,
#: each alias counted at every use: the shipped configs hold under 1,500; every later check walks the
#: expanded values, so nested aliases multiplying them (a "billion laughs") are refused here
MAX_EXPANDED_NODES = 100_000

#: suffix of a key whose list is appended to the base's list of that key (``settings+: [X]``)
APPEND = "+"
#: suffix of a key whose value replaces the base's, a mapping too (``caps!: {BO: ...}``)
REPLACE = "!"
#: the key of a YAML merge (``<<: *anchor``): its mapping's keys are the mapping's own
YAML_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping gives the same key twice (YAML parsers silently keep the last one)."""


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that rejects a key given twice in one mapping, naming both lines.

    Keys brought in by a YAML merge (``<<: *anchor``) may be overridden, as YAML intends.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == YAML_MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool | None):
                continue  # unhashable or unusual keys: the base class reports them
            if key in first:
                raise DuplicateKeyError(
                    problem=f"duplicate key {key!r} (first given on line {first[key]}): a mapping may "
                    "give a key only once",
                    problem_mark=key_node.start_mark,
                )
            first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


class ExpansionError(yaml.MarkedYAMLError):
    """The file's aliases expand beyond :data:`MAX_EXPANDED_NODES` values, or into themselves."""


def check_expansion(root: yaml.Node, limit: int = MAX_EXPANDED_NODES) -> int:
    """The number of values ``root`` expands to (aliases counted at each use), computed once per
    distinct node, so nothing is expanded; an :class:`ExpansionError` beyond ``limit``, or when an
    alias lies inside the node it refers to (a structure containing itself)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise ExpansionError(
                problem="an alias refers to the anchor it lies inside (a structure containing itself)",
                problem_mark=node.start_mark,
            )
        open_nodes.add(key)
        children = node.value if isinstance(node, yaml.SequenceNode) else []
        if isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                raise ExpansionError(
                    problem=f"its YAML aliases expand to more than {limit:,} values (anchors nested in "
                    "anchors multiply; MAX_EXPANDED_NODES in vhct/pipeline/config/loading.py)",
                    problem_mark=node.start_mark,
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root)


def unsuffixed(key: str) -> str:
    """``key`` without a merge suffix (:data:`APPEND`, :data:`REPLACE`): the key it updates."""
    return key[: -len(APPEND)] if key.endswith(APPEND) else key.removesuffix(REPLACE)


def check_suffixes(root: yaml.Node) -> None:
    """A :class:`DuplicateKeyError` where one mapping gives a key in two of its forms (``settings``
    with ``settings+`` or ``settings!``, or ``key+`` with ``key!``): :func:`merge` would apply both,
    one after the other, and silently. Each distinct node is looked at once (aliases are not expanded)."""
    seen: set[int] = set()
    pending: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    while pending:
        node, at = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            pending.extend((item, (*at, str(i))) for i, item in enumerate(node.value))
        if not isinstance(node, yaml.MappingNode):
            continue
        forms: dict[str, yaml.ScalarNode] = {}
        for key_node, value in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == YAML_MERGE_TAG:
                continue
            first = forms.setdefault(unsuffixed(key_node.value), key_node)
            if first is not key_node and first.value != key_node.value:
                raise DuplicateKeyError(
                    problem=f"mapping {'/'.join(at) or '<root>'} gives both {first.value!r} (line "
                    f"{first.start_mark.line + 1}) and {key_node.value!r}: a key is given once, to merge "
                    f"into a base's value (plain), append to its list ({APPEND!r}) or replace it "
                    f"({REPLACE!r})",
                    problem_mark=key_node.start_mark,
                )
            pending.append((value, (*at, key_node.value)))


def parse_yaml(text: str) -> Any:
    """The YAML document ``text`` as Python values (:class:`UniqueKeyLoader`), its aliases checked by
    :func:`check_expansion` and its keys by :func:`check_suffixes` before anything is built."""
    loader = UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_expansion(node)
        check_suffixes(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def decode(path: Path, raw: bytes) -> str:
    """``raw`` as UTF-8 text; otherwise a ConfigError naming the file, the line and the byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}:{line}: the config file is not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte "
            f"position {exc.start}: {exc.reason}); save it as UTF-8"
        ) from None


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Parse one YAML config file; an empty file, a syntax error, a key given twice, text that is not
    UTF-8, aliases expanding too far or a non-mapping names the file (and the line)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc.strerror or exc}") from exc
    text = decode(path, raw)
    try:
        config = parse_yaml(text)
    except RecursionError:
        raise ConfigError(f"{path}: the YAML is nested too deeply to read") from None
    except (DuplicateKeyError, ExpansionError) as exc:
        mark = exc.problem_mark
        raise ConfigError(f"{path}:{mark.line + 1}:{mark.column + 1}: {exc.problem}") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = ": ".join(p for p in (exc.context, exc.problem) if p)
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: YAML syntax error: {exc}") from exc
    if config is None:
        raise ConfigError(
            f"{path}: the config file is empty (or only comments); it needs the keys "
            f"{', '.join(REQUIRED_SECTIONS)} ({NOT_MERGED})",
            (),
        )
    if not isinstance(config, dict):
        raise ConfigError(
            f"{path}:1: the config file does not hold a mapping of keys (got a {type(config).__name__})"
        )
    return config


def _child(node: yaml.Node, part: str) -> tuple[yaml.Node | None, int | None]:
    """The value ``node`` gives for the key or item number ``part``, and its line; a mapping's own key
    first, else one its YAML merges (``<<: *anchor``) bring in, at the line the anchor spells it."""
    if isinstance(node, yaml.SequenceNode):
        if part.isdigit() and int(part) < len(node.value):
            item = node.value[int(part)]
            return item, item.start_mark.line + 1
        return None, None
    if not isinstance(node, yaml.MappingNode):
        return None, None
    found: tuple[yaml.Node | None, int | None] = (None, None)
    merged: list[yaml.Node] = []
    for key_node, value in node.value:
        if key_node.tag == YAML_MERGE_TAG:
            merged.extend(value.value if isinstance(value, yaml.SequenceNode) else [value])
        elif isinstance(key_node, yaml.ScalarNode) and key_node.value == part:
            found = value, key_node.start_mark.line + 1
    for source in merged if found[0] is None else []:
        found = _child(source, part)
        if found[0] is not None:
            break
    return found


def key_line(path: Path | str, key: Sequence[str]) -> tuple[int | None, int]:
    """Line (1-based) of the deepest part of ``key`` that the YAML file spells out (a YAML merge's
    keys included), and that depth."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, ValueError, RecursionError, yaml.YAMLError):  # (read_config_file reports these)
        return None, 0
    line, depth = None, 0
    for part in key:
        child, child_line = _child(node, str(part))
        if child is None:
            break
        node, line, depth = child, child_line, depth + 1
    return line, depth


#: a key path of a config, its parts as text (item numbers too)
KeyPath = tuple[str, ...]


@dataclass
class Origins:
    """Where each value of a merged config was written: the key path of a value a file set (a
    value it replaced or appended, not a mapping it merged into) -> that file and the key path as
    the file spells it (``settings+/0`` for the item ``settings/7`` it appended). A value inside one
    was written where it is; a file replacing a value forgets what earlier files wrote inside it.
    ``None`` for a file: the command line's ``--config``."""

    written: dict[KeyPath, tuple[Path | None, KeyPath]] = field(default_factory=dict)

    def wrote(self, source: Path | None, at: KeyPath, spelled: KeyPath) -> None:
        """The value at ``at`` is now ``source``'s, spelled there ``spelled``."""
        self.written = {k: v for k, v in self.written.items() if k[: len(at)] != at}
        self.written[at] = (source, spelled)

    def of(self, key: Sequence[str]) -> tuple[Path | None, KeyPath] | None:
        """The file that wrote the value at ``key`` and the key as spelled there (None: unknown)."""
        key = tuple(key)
        for depth in range(len(key), 0, -1):
            if key[:depth] in self.written:
                source, spelled = self.written[key[:depth]]
                return source, (*spelled, *key[depth:])
        return None


#: where a value set by Snakemake's ``--config KEY=VALUE`` (``load``'s overrides) was written
COMMAND_LINE = "--config"


def located(error: ConfigError, files: Sequence[Path | str], origins: Origins | None = None) -> ConfigError:
    """The error prefixed with ``file:line:`` of its key: the file that wrote the value (``origins``),
    else the last of ``files`` spelling out most of the key; a key spelled otherwise there
    (``settings+/0``) is named as written too."""
    origin = origins.of(error.key) if origins is not None and error.key else None
    if origin is not None:
        source, spelled = origin
        if source is None:
            where = COMMAND_LINE
        else:
            line, depth = key_line(source, spelled)
            where = f"{source}:{line}" if depth else str(source)
        message = f"{where}: {error}"
        plain = f"config key {'/'.join(error.key)}: "
        if spelled != error.key and str(error).startswith(plain):
            message = f"{where}: {plain[:-2]} (written as {'/'.join(spelled)}): {str(error)[len(plain) :]}"
        return ConfigError(message, error.key, error.text)
    if not files:
        return error
    best, line, depth = None, None, 0
    if error.key:
        for path in files:
            found, level = key_line(path, error.key)
            if level >= depth and level > 0:
                best, line, depth = path, found, level
    where = f"{best}:{line}" if best is not None else ", ".join(map(str, files))
    return ConfigError(f"{where}: {error}", error.key, error.text)


#: called by :func:`merge` for each value it sets: its key path in the result, and in the update
Wrote = Callable[[KeyPath, KeyPath], None]


def _nothing(at: KeyPath, spelled: KeyPath) -> None:
    """A :data:`Wrote` that keeps nothing."""


def merge(
    base: Mapping[str, Any], update: Mapping[str, Any], at: KeyPath = (), wrote: Wrote = _nothing
) -> dict[str, Any]:
    """``base`` updated by ``update``, neither changed: a mapping in both is merged key by key
    (recursively); any other value of ``update`` (list, number, string, null) replaces the base's.

    Two forms add to a base's list instead of re-listing it: ``key+: [...]`` appends to the list
    ``key``, and a mapping of item numbers updates those items (``panels: {0: {settings+: [X]}}``).
    Either form where the base has no such list is a ConfigError naming the key (``at``: its path).
    ``key!: {...}`` replaces the base's mapping ``key`` instead of merging into it (dropping its keys).
    ``wrote`` hears of each value set (not of a mapping merged into), for :class:`Origins`.
    """
    out = copy.deepcopy(dict(base))
    for key, value in update.items():
        where = (*at, str(key))
        if isinstance(key, str) and key.endswith(REPLACE):
            out[unsuffixed(key)] = copy.deepcopy(value)
            wrote((*at, unsuffixed(key)), where)
        elif isinstance(key, str) and key.endswith(APPEND):
            name = unsuffixed(key)
            if not isinstance(value, list) or not isinstance(out.get(name), list):
                raise key_error(where, f"appends a list to a base config's list {name!r}: none here")
            for number in range(len(value)):
                wrote((*at, name, str(len(out[name]) + number)), (*where, str(number)))
            out[name] = [*out[name], *copy.deepcopy(value)]
        elif isinstance(value, Mapping) and isinstance(out.get(key), list):
            out[key] = _update_items(out[key], value, where, wrote)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value, where, wrote)
        else:
            out[key] = copy.deepcopy(value)
            wrote(where, where)
    return out


def _update_items(items: list[Any], update: Mapping[Any, Any], at: KeyPath, wrote: Wrote) -> list[Any]:
    """The base's list ``items`` with the items ``update`` numbers (0-based) merged or replaced."""
    out = list(items)
    for index, value in update.items():
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(out):
            raise key_error((*at, str(index)), f"updates the base's list by item numbers 0 to {len(out) - 1}")
        where = (*at, str(index))
        if isinstance(value, Mapping) and isinstance(out[index], Mapping):
            out[index] = merge(out[index], value, where, wrote)
        else:
            out[index] = copy.deepcopy(value)
            wrote(where, where)
    return out


def base_chain(files: Sequence[Path | str]) -> list[tuple[Path, dict[str, Any]]]:
    """Each config file (resolved) with its content, the files it extends (key ``base``,
    relative to the file) before it; every file once. A base chain that loops is an error."""
    out: dict[Path, dict[str, Any]] = {}

    def visit(path: Path, chain: tuple[Path, ...]) -> None:
        if path in chain:
            raise ConfigError(
                f"{path}: 'base' chain loops: {' -> '.join(map(str, (*chain, path)))}", ("base",)
            )
        content = out[path] if path in out else read_config_file(path)
        base = content.get(BASE_KEY)
        if base is not None:
            if not isinstance(base, str):
                raise located(key_error(BASE_KEY, f"must be a file path, got {base!r}"), [path])
            visit((path.parent / base).resolve(), (*chain, path))
        out.setdefault(path, content)

    for path in files:
        visit(Path(path).resolve(), ())
    return list(out.items())


def merged_origins(
    files: Sequence[Path | str], overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[Path], Origins]:
    """:func:`merged_files`, and where each of its values was written (:class:`Origins`)."""
    chain = base_chain(files)
    config: dict[str, Any] = {}
    origins = Origins()
    for path, content in chain:
        try:
            config = merge(config, content, wrote=partial(origins.wrote, path))
        except ConfigError as exc:
            raise located(exc, [path]) from None
    config.pop(BASE_KEY, None)
    if overrides:
        config = merge(config, overrides, wrote=partial(origins.wrote, None))
    return config, [path for path, _ in chain], origins


def merged_files(
    files: Sequence[Path | str], overrides: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[Path]]:
    """The files merged as the pipeline merges them (each after its bases; later files update
    earlier ones, :func:`merge`; then ``overrides``), not validated, without the ``base`` key;
    and the files read, bases first."""
    config, paths, _ = merged_origins(files, overrides)
    return config, paths


def output_folder(path: Path | str) -> Any:
    """The folder of the outputs of a config given by the file ``path`` (the last one given): its
    own key ``output``, never a base's (a config extending another keeps its outputs apart from the
    base's), else the file's name without its suffix, empty for the default config's name
    (results/ itself). A name that is no folder name is an error naming the file."""
    path = Path(path)
    content = read_config_file(path)
    if OUTPUT_KEY in content:
        return content[OUTPUT_KEY]
    name = "" if path.name == DEFAULT_CONFIG.name else path.stem
    problem = output_problem(name)
    if problem:
        raise ConfigError(
            f"{path}: the folder of its outputs would be named after the file, but {problem}: "
            f"rename the file or give the key {OUTPUT_KEY}",
            (OUTPUT_KEY,),
        )
    return name


def load(
    files: Sequence[Path | str], overrides: Mapping[str, Any] | None = None, plan: bool = True
) -> tuple[Config, list[Path]]:
    """The config a pipeline run uses, and the files it was read from (bases first).

    The files are read with :class:`UniqueKeyLoader`, each after the files it extends, and merged
    in order (:func:`merge`), then ``overrides`` (Snakemake's ``--config KEY=VALUE``); the result is
    validated in full (:meth:`Config.from_dict`, defaults filled in). This is the one loader: the
    pre-check (``python -m vhct.pipeline.config``), the workflow (``workflow/rules/common.smk``) and
    the provenance recorder call it. Errors name the file and line where the offending value was
    written (a base's or the config's own, :class:`Origins`), and the key. The key ``output``
    is the last file's own (:func:`output_folder`) unless ``overrides`` give it.

    A config declaring an analysis plan (key ``plan``, ``vhct.pipeline.config.plan``) runs the seeds
    the plan fixes, and is refused (a PlanError naming the file and what differs) unless the plan
    matches it; ``plan=False`` validates the config with its own seed counts instead, on seeds after
    the pilot's, the plan unread (for what only inspects a config, never for a run).
    """
    source, paths, origins = merged_origins(files, overrides)
    if files and PLAN_KEY in source:
        source = resolved(source, base_chain(files))
        if plan:
            source, _ = load_plan(source, str(files[-1]))
        elif isinstance(source[PLAN_KEY], dict) and isinstance(source[PLAN_KEY].get("pilot"), str):
            source = provisional(source, merged_files([source[PLAN_KEY]["pilot"]])[0])
    if files and OUTPUT_KEY not in (overrides or {}):
        source[OUTPUT_KEY] = output_folder(files[-1])
    return validated(source, paths, origins=origins), paths


def validated(
    source: dict[str, Any],
    files: Sequence[Path | str] = (),
    deep: bool = True,
    origins: Origins | None = None,
) -> Config:
    """``source`` validated (defaults filled in place); an error is located where its value was
    written (``origins``), else in ``files``."""
    try:
        return Config.from_dict(source, deep=deep)
    except ConfigError as exc:
        raise located(exc, files, origins) from None
