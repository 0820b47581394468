"""Config files that extend others (key `base`): the one merge of the package, and the derived
shipped configs merging to what they stated in full before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from support import REPO, TINY

from vhct.pipeline import config as vc

FIXTURES = Path(__file__).parent / "fixtures"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_mappings_merge_key_by_key_and_everything_else_is_replaced():
    base = {
        "a": {"x": 1, "y": {"p": 1, "q": 2}},
        "lst": [1, 2, 3],
        "s": "base",
        "m": {"k": 1},
        "n": None,
    }
    update = {"a": {"y": {"q": 20}, "z": 3}, "lst": [9], "s": None, "m": 5, "n": {"k": 2}, "new": [1]}
    merged = vc.merge(base, update)
    assert merged == {
        "a": {"x": 1, "y": {"p": 1, "q": 20}, "z": 3},
        "lst": [9],  # a list replaces, it is not appended to
        "s": None,
        "m": 5,  # a value replaces a mapping
        "n": {"k": 2},  # and a mapping replaces a value
        "new": [1],
    }
    assert list(merged) == ["a", "lst", "s", "m", "n", "new"]  # base order first, new keys after
    assert base["a"]["y"] == {"p": 1, "q": 2} and update["a"] == {"y": {"q": 20}, "z": 3}  # unchanged
    merged["new"].append(2)
    assert update["new"] == [1]  # the result shares nothing with the arguments


def test_a_base_chain_is_read_from_the_root_and_each_file_updates_it(tmp_path):
    root = write(tmp_path / "root.yaml", "progress_every: 1\nresources: {run: {mem_mb: 10, runtime: 5}}\n")
    write(
        tmp_path / "mid" / "mid.yaml",
        "base: ../root.yaml\nprogress_every: 2\nresources: {run: {runtime: 6}}\n",
    )
    leaf = write(
        tmp_path / "mid" / "deeper" / "leaf.yaml", "base: ../mid.yaml\nresources: {data: {threads: 3}}\n"
    )
    assert vc.merged_files([leaf])[1] == [
        root.resolve(),
        (tmp_path / "mid" / "mid.yaml").resolve(),
        leaf.resolve(),
    ]
    assert vc.merged_files([leaf])[0] == {
        "progress_every": 2,
        "resources": {"run": {"mem_mb": 10, "runtime": 6}, "data": {"threads": 3}},
    }


def test_base_paths_are_relative_to_the_file_not_the_working_directory(tmp_path, monkeypatch):
    write(tmp_path / "conf" / "base.yaml", "progress_every: 3\n")
    child = write(tmp_path / "conf" / "child.yaml", "base: base.yaml\n")
    write(tmp_path / "base.yaml", "progress_every: 99\n")  # the same name in the working directory
    monkeypatch.chdir(tmp_path)
    assert vc.merged_files([Path("conf/child.yaml")])[0] == {"progress_every": 3}
    assert vc.merged_files([child])[1][0] == (tmp_path / "conf" / "base.yaml").resolve()


def test_a_base_cycle_is_rejected_naming_the_files(tmp_path):
    write(tmp_path / "a.yaml", "base: b.yaml\n")
    write(tmp_path / "b.yaml", "base: c.yaml\n")
    write(tmp_path / "c.yaml", "base: a.yaml\n")
    with pytest.raises(vc.ConfigError, match="'base' chain loops") as info:
        vc.merged_files([tmp_path / "a.yaml"])[0]
    for name in ("a.yaml", "b.yaml", "c.yaml"):
        assert name in str(info.value)
    write(tmp_path / "self.yaml", "base: self.yaml\n")
    with pytest.raises(vc.ConfigError, match="loops"):
        vc.merged_files([tmp_path / "self.yaml"])[1]


def test_a_base_that_is_not_a_path_is_rejected_with_its_line(tmp_path):
    path = write(tmp_path / "c.yaml", "progress_every: 2\nbase: [a.yaml]\n")
    with pytest.raises(vc.ConfigError, match=f"^{path}:2: config key base: must be a file path"):
        vc.merged_files([path])[0]


def test_command_line_overrides_come_last(tmp_path):
    override = write(tmp_path / "o.yaml", f"base: {TINY}\nprogress_every: 7\n")
    cfg, files = vc.load([override], {"progress_every": 9})
    assert cfg.progress_every == 9 and files == [TINY.resolve(), override.resolve()]


def without_nulls(value):
    """A merged config with its null values (the config's "unset"), an empty ``skip_claims`` (its
    default) and then-empty mappings dropped."""
    if not isinstance(value, dict):
        return value
    unset = [k for k, v in value.items() if v is None or (k == "skip_claims" and v == [])]
    kept = {k: without_nulls(v) for k, v in value.items() if k not in unset}
    return {k: v for k, v in kept.items() if v != {} or value[k] == {}}


def test_paper_yaml_merges_to_its_former_full_text():
    """config/paper.yaml derives from config.yaml and states only the scale changes; merged, it is
    what the former full file was (frozen in the fixture), so the pipeline plans the same jobs."""
    former = json.loads((FIXTURES / "paper.expanded.json").read_text(encoding="utf-8"))["config"]
    paper = REPO / "config" / "paper.yaml"
    merged = vc.merged_files([paper])[0]
    assert without_nulls(merged) == without_nulls(former)  # a null lifts a base's value: unset
    for section in ("settings", "experiments", "figures"):  # their order orders the jobs
        assert list(merged[section]) == list(former[section]), section
    assert vc.merged_files([paper])[1] == [(REPO / "config" / "config.yaml").resolve(), paper.resolve()]
    # expanded into jobs, the two are the same: runs, batches, what each run and figure is given
    derived, _ = vc.load([paper])
    frozen = vc.validate_config(former)
    assert derived.run_jobs() == frozen.run_jobs()
    assert derived.run_batches() == frozen.run_batches()
    assert [derived.run_spec(*job) for job in derived.run_jobs()] == [
        frozen.run_spec(*job) for job in frozen.run_jobs()
    ]
    assert {f: derived.figure_spec(f) for f in derived.figures} == {
        f: frozen.figure_spec(f) for f in frozen.figures
    }
    for experiment, exp in derived.experiments.items():
        for setting in exp.settings:
            for key in ("threads", "mem_mb", "runtime"):
                assert derived.resource("run", key, experiment, setting) == frozen.resource(
                    "run", key, experiment, setting
                )


def test_paper_yaml_states_only_what_differs_from_the_default():
    """No key of paper.yaml repeats config.yaml's value (a repeated value is a second place to edit)."""
    default = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text(encoding="utf-8"))

    def repeats(derived, base, path=()):
        for key, value in derived.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                yield from repeats(value, base[key], (*path, key))
            elif key in base and base[key] == value:
                yield "/".join((*path, key))

    assert list(repeats({k: v for k, v in paper.items() if k != "base"}, default)) == []


def test_a_config_adds_to_its_bases_lists_without_re_listing_them(tmp_path):
    """Issue 40, item 4: rho = 0.9 for VHCT on Garland, added to the experiment's settings and to
    the regret figure's first panel by appending (``key+``) and by item number, nothing re-listed;
    the result is the tiny config with both lists extended, and every other run is planned as before."""
    leaf = write(
        tmp_path / "mine.yaml",
        f"""base: {TINY}
settings:
  VHCT-rho0.9: {{algorithm: VHCT, label: "VHCT (rho 0.9)", params: {{rho: 0.9, nu: 1.0, b: 1.0}}}}
experiments:
  garland:
    settings+: [VHCT-rho0.9]
figures:
  regret:
    panels:
      0: {{settings+: [VHCT-rho0.9]}}
""",
    )
    base, _ = vc.load([TINY])
    mine, files = vc.load([leaf])
    assert files == [TINY.resolve(), leaf.resolve()]
    garland = list(base.experiments["garland"].settings)
    assert list(mine.experiments["garland"].settings) == [*garland, "VHCT-rho0.9"]
    panel = base.source["figures"]["regret"]["panels"][0]
    assert mine.source["figures"]["regret"]["panels"][0]["settings"] == [*panel["settings"], "VHCT-rho0.9"]
    new = set(mine.run_jobs()) - set(base.run_jobs())
    assert new and {s for _, s, _ in new} == {"VHCT-rho0.9"} and set(base.run_jobs()) < set(mine.run_jobs())
    assert set(base.run_batches()) <= set(mine.run_batches())  # no other batch changes


def test_a_config_replaces_a_bases_mapping_with_the_bang_suffix():
    """``key!`` replaces the base's mapping where a plain key merges into it: config/paper-local.yaml
    drops paper.yaml's Landmine caps (they name a setting it does not run there) this way."""
    from vhct.pipeline.config.loading import merge

    base = {"caps": {"A": {"max_seeds": 2}, "B": {"max_horizon": 5}}, "seeds": 3}
    assert merge(base, {"caps": {"B": {"max_seeds": 1}}})["caps"] == {
        "A": {"max_seeds": 2},
        "B": {"max_horizon": 5, "max_seeds": 1},
    }
    assert merge(base, {"caps!": {"B": {"max_seeds": 1}}}) == {"caps": {"B": {"max_seeds": 1}}, "seeds": 3}
    assert base["caps"]["A"] == {"max_seeds": 2}  # the base is not changed
    local, _ = vc.load([REPO / "config" / "paper-local.yaml"], plan=False)
    assert "BO-restarts5" not in local.experiments["landmine"].settings
    # its Landmine caps replaced (none left), BO there stops at its own setting's cap, not paper.yaml's
    assert local.experiments["landmine"].caps == {}
    own = local.settings["BO"].max_horizon
    assert local.experiment_info("landmine").settings["BO"].horizon == min(
        own, local.experiments["landmine"].horizon
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "experiments:\n  garland:\n    settingz+: [VHCT-rho0.75]\n",
            r"mine.yaml:4: config key experiments/garland/settingz\+: appends a list to a base config's list "
            r"'settingz': none here",
        ),
        (
            "experiments:\n  garland:\n    settings+: VHCT-rho0.75\n",
            r"experiments/garland/settings\+: appends a list",
        ),
        (
            "figures:\n  regret:\n    panels:\n      7: {settings+: [POO]}\n",
            r"figures/regret/panels/7: updates the base's list by item numbers 0 to 1",
        ),
    ],
)
def test_adding_to_a_list_the_base_lacks_is_refused_naming_the_key(tmp_path, text, message):
    leaf = write(tmp_path / "mine.yaml", f"base: {TINY}\n{text}")
    with pytest.raises(vc.ConfigError, match=message):
        vc.load([leaf])


def line_of(path: Path, text: str) -> int:
    """The line (1-based) of ``path`` holding ``text``."""
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("text", "spelled", "key"),
    [
        ("experiments:\n  garland:\n    horizon: -3\n", "horizon: -3", "experiments/garland/horizon: "),
        (
            "experiments:\n  garland:\n    settings+: [BO, ghost]\n",
            "settings+",
            r"experiments/garland/settings/\d+ \(written as experiments/garland/settings\+/1\): "
            "unknown setting 'ghost'",
        ),
        (
            "figures:\n  regret:\n    panels:\n      0:\n        settings+:\n          - ghost\n",
            "- ghost",
            r"figures/regret/panels/0/settings/\d+ \(written as figures/regret/panels/0/settings\+/0\): "
            "setting 'ghost' is not run",
        ),
        (
            "x-bad: &bad\n  horizon: -3\nexperiments:\n  garland:\n    <<: *bad\n",
            "horizon: -3",
            "experiments/garland/horizon: ",
        ),
        (
            "settings!:\n  POO: {algorithm: NOPE}\nexperiments: {garland: {settings: [POO]}}\n",
            "NOPE",
            r"settings/POO/algorithm \(written as settings!/POO/algorithm\): unknown algorithm 'NOPE'",
        ),
    ],
    ids=["plain", "appended", "appended-by-item-number", "yaml-merge", "replaced"],
)
def test_an_error_of_a_child_config_names_the_childs_file_and_line(tmp_path, capsys, text, spelled, key):
    """Issue 48, item 6. Probe: a child of config/tiny.yaml (``base: <tiny>``) with one wrong value,
    checked by ``python -m vhct.pipeline.config child.yaml``: an appended ``settings+: [ghost]`` was
    reported at ``config/tiny.yaml:81`` (the base's ``settings``), a value from a YAML merge
    (``<<: *bad``) at the base's ``horizon``. The error names the file and line where the value was
    written, and a key spelled otherwise there (``settings+/0``) as written; one line."""
    child = write(tmp_path / "child.yaml", f"base: {TINY}\n{text}")
    assert vc.main([str(child)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(TINY) not in err, err
    assert re.match(rf"{re.escape(str(child))}:{line_of(child, spelled)}: config key {key}", err), err


def test_an_error_in_a_base_is_still_named_in_the_base(tmp_path):
    """A child that sets a sibling key does not take the blame for its base's wrong value; a child
    replacing the value does."""
    text = TINY.read_text(encoding="utf-8").replace("horizon: 60", "horizon: -3", 1)
    base = write(tmp_path / "base.yaml", text)
    child = write(tmp_path / "child.yaml", "base: base.yaml\nexperiments:\n  garland:\n    seeds: 3\n")
    with pytest.raises(vc.ConfigError) as info:
        vc.load([child])
    assert str(info.value).startswith(f"{base.resolve()}:{line_of(base, 'horizon: -3')}: config key ")
    child.write_text("base: base.yaml\nexperiments:\n  garland:\n    horizon: 0\n", encoding="utf-8")
    with pytest.raises(vc.ConfigError, match=f"^{child.resolve()}:4: config key experiments/garland/horizon"):
        vc.load([child])


def test_a_command_line_value_is_named_as_such():
    """Probe: ``snakemake -n --configfile config/tiny.yaml --config progress_every=0`` reported the
    error at the line of config/tiny.yaml that sets ``progress_every``: the value is the command line's."""
    with pytest.raises(vc.ConfigError, match="^--config: config key progress_every: "):
        vc.load([TINY], {"progress_every": 0})


@pytest.mark.parametrize(
    ("text", "first", "second", "mapping"),
    [
        (
            "settings:\n  POO: {algorithm: POO}\nsettings+: [X]\n",
            "'settings' (line 2)",
            "settings+",
            "<root>",
        ),
        (
            "experiments:\n  garland:\n    settings: [POO]\n    settings+: [PCT]\n",
            "'settings' (line 4)",
            "settings+",
            "experiments/garland",
        ),
        (
            "experiments:\n  garland:\n    caps!: {}\n    caps: {}\n",
            "'caps!' (line 4)",
            "caps",
            "experiments/garland",
        ),
        (
            "figures:\n  regret:\n    panels:\n      - settings+: [POO]\n        settings!: [PCT]\n",
            "'settings+' (line 5)",
            "settings!",
            "figures/regret/panels/0",
        ),
    ],
    ids=["plain+append", "plain+append-nested", "replace+plain", "append+replace-in-list-item"],
)
def test_a_key_given_with_its_suffixed_form_in_one_mapping_is_refused(
    tmp_path, capsys, text, first, second, mapping
):
    """Issue 48, item 6. Probe: ``experiments: {garland: {settings: [POO], settings+: [PCT]}}`` in a
    child of config/tiny.yaml was checked valid by ``python -m vhct.pipeline.config child.yaml``,
    garland running POO and PCT (the plain key replaced the base's list, the ``+`` one appended to
    it). A mapping gives a key once: plain (merge or replace), ``+`` (append) or ``!`` (replace)."""
    child = write(tmp_path / "child.yaml", f"base: {TINY}\n{text}")
    assert vc.main([str(child)]) == 1
    err = capsys.readouterr().err
    last = len(text.splitlines()) + 1  # the second form is on the file's last line
    assert err.startswith(f"{child}:{last}:"), err
    assert f"mapping {mapping} gives both {first} and {second!r}: a key is given once" in err, err
    assert err.count("\n") == 1
