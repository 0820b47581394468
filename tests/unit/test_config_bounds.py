"""Every size-like input of a config is bounded before anything is allocated or planned (issue 39):
BO's n_init, YAML aliases, seeds, horizons, the number of runs, names; and a file that is not UTF-8
is refused naming it. Each error is one line naming the file and the key (or the line)."""

from __future__ import annotations

import pytest
import yaml
from support import TINY
from test_config_checks import derived, precheck

from vhct.pipeline import config as vc
from vhct.pipeline.config.loading import check_expansion, parse_yaml
from vhct.pipeline.files import atomic_paths

#: levels of nested aliases of the "billion laughs" probe, each listing the previous level ten times
LAUGH_LEVELS = 6
LAUGH_FANOUT = 10


def laughs(levels: int = LAUGH_LEVELS) -> str:
    """`x-` keys whose aliases expand to LAUGH_FANOUT**levels values (one line per level)."""
    lines = [f"x-l0: &l0 [{', '.join(['1.0'] * LAUGH_FANOUT)}]"]
    lines += [f"x-l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * LAUGH_FANOUT)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_bo_n_init_beyond_memory_is_refused_naming_the_key(tmp_path, capsys):
    """`n_init: 1000000000` drew the whole design in the pre-check (7.45 GiB, OOM-killed): refused first."""
    path = derived(tmp_path, "settings:\n  BO: {params: {n_init: 1000000000}}\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:3: config key settings/BO/params/n_init: BO rejects it"), err
    assert "n_init must be at most" in err and "got 1,000,000,000" in err


def test_alias_expansion_beyond_the_bound_is_refused_naming_the_file(tmp_path, capsys):
    """A "billion laughs" in `x-` keys was expanded by every walk of the config (10**6 values here,
    each level ten times the last): refused while reading, naming the file and the line."""
    path = derived(tmp_path, laughs())
    err = precheck(path, capsys)
    first_beyond = next(k for k in range(LAUGH_LEVELS + 1) if laugh_size(k) > vc.MAX_EXPANDED_NODES)
    assert err.startswith(f"{path}:{first_beyond + 2}:"), err  # line 1 is `base`, level k on line k + 2
    assert f"expand to more than {vc.MAX_EXPANDED_NODES:,} values" in err


def laugh_size(level: int) -> int:
    """Values the list of one level of :func:`laughs` expands to."""
    return 1 + LAUGH_FANOUT * (1 if level == 0 else laugh_size(level - 1))


def test_alias_expansion_is_counted_per_use_without_expanding():
    counted = check_expansion(yaml.compose("a: &a [1, 2]\nb: *a\nc: [*a, *a]\n"))
    assert counted == 1 + 3 + 3 + 3 + 7  # root, keys, list a, b's use of it, c with two uses
    assert parse_yaml("a: &a [1, 2]\nb: *a\n") == {"a": [1, 2], "b": [1, 2]}
    levels = 12  # 10**12 values: counted, never expanded (a walk of them would take hours)
    counted = check_expansion(yaml.compose(laughs(levels)), limit=10**15)
    expected = 1 + sum(1 + laugh_size(k) for k in range(levels + 1))  # root, and each key and its list
    assert counted == expected


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path, capsys):
    """`x-a: &a [*a]` built a list containing itself; the finiteness check recursed until Python stopped."""
    path = derived(tmp_path, "x-a: &a [1, *a]\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:2:"), err
    assert "an alias refers to the anchor it lies inside" in err


def test_a_yaml_nested_too_deeply_is_refused_naming_the_file(tmp_path, capsys):
    path = derived(tmp_path, "x-deep: " + "[" * 5000 + "]" * 5000 + "\n")
    assert precheck(path, capsys) == f"{path}: the YAML is nested too deeply to read"


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("experiments:\n  garland: {seeds: 1000000}\n", "experiments/garland/seeds", "at most 1,000 seeds"),
        (
            f"experiments:\n  garland: {{seeds: {list(range(1001))}}}\n",
            "experiments/garland/seeds",
            "got 1,001",
        ),
    ],
)
def test_seeds_are_bounded_naming_the_key(tmp_path, capsys, text, key, words):
    """`seeds: 1000000` passed and Snakemake was still planning its jobs after two minutes."""
    path = derived(tmp_path, text)
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:3: config key {key}: "), err
    assert words in err and "MAX_SEEDS" in err


def test_the_runs_of_all_experiments_together_are_bounded():
    config = vc.merged_files([TINY])[0]
    for exp in config["experiments"].values():
        exp["seeds"] = vc.MAX_SEEDS  # each experiment within the bound, together beyond MAX_RUNS
    with pytest.raises(vc.ConfigError, match=r"config key experiments: the config plans [\d,]+ runs") as info:
        vc.validate_config(config)
    assert f"more than MAX_RUNS {vc.MAX_RUNS:,}" in str(info.value) and "max_seeds" in str(info.value)


def test_a_name_too_long_for_file_names_is_refused_naming_the_key(tmp_path, capsys):
    """A 300-character setting name passed and its job died with `OSError: File name too long`."""
    long = "S" * 300
    path = derived(tmp_path, f"settings:\n  {long}: {{algorithm: Random}}\n")
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:3: config key settings/{long}: a name may have at most {vc.NAME_MAX}")
    figure = "F" * (vc.NAME_MAX + 1)
    path = derived(tmp_path, f"figures:\n  {figure}: {{kind: regret, panels: [{{experiment: garland}}]}}\n")
    assert f"config key figures/{figure}: a name may" in precheck(path, capsys)


def test_the_longest_name_allowed_fits_the_longest_file_derived_from_it(tmp_path):
    longest = "F" * vc.NAME_MAX
    path = derived(tmp_path, f"figures:\n  {longest}: {{kind: regret, panels: [{{experiment: garland}}]}}\n")
    assert longest in vc.load([path])[0].figures
    with atomic_paths(tmp_path / f"{longest}.png") as (tmp,):  # the figure's temporary file
        tmp.write_bytes(b"png")
    assert (tmp_path / f"{longest}.png").read_bytes() == b"png"


def test_a_file_that_is_not_utf8_is_refused_naming_it(tmp_path, capsys):
    """A Latin-1 "café" in a comment printed a raw UnicodeDecodeError without the file's name."""
    path = tmp_path / "latin1.yaml"
    path.write_bytes(f"base: {TINY}\n# café\n".encode("latin-1"))
    err = precheck(path, capsys)
    assert err.startswith(f"{path}:2: the config file is not UTF-8 text (byte 0xe9 at byte position "), err
    child = tmp_path / "child.yaml"
    child.write_text(f"base: {path.name}\n", encoding="utf-8")  # as a base of the file given, too
    with pytest.raises(vc.ConfigError, match=f"^{path}:2: the config file is not UTF-8"):
        vc.load([child])


def test_the_finiteness_check_walks_a_shared_value_once(monkeypatch):
    """Shared lists (YAML aliases) nested 20 levels deep stand in 2**20 places: the check visits each
    list once, and a NaN in them is still named by its first place."""
    from vhct.pipeline.config import sections

    depth, check, visits = 20, sections.check_finite, []

    def counted(*args):
        visits.append(args[0])
        return check(*args)

    monkeypatch.setattr(sections, "check_finite", counted)
    level: list = [1.0, 2.0]
    for _ in range(depth):
        level = [level, level]
    sections.check_finite({"x": level, "y": 3.0})
    assert len(visits) <= 3 * depth + 5  # each list once, its items counted; not 2**depth
    level[1][1] = [float("nan")]  # level[0] is level[1]: its first place is x/0/1
    with pytest.raises(vc.ConfigError, match=r"config key x/0/1/0: must be a finite number, got nan"):
        sections.check_finite({"x": level})
