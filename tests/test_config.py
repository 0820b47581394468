"""Config loading: schema (with the registries' names), cross-reference checks, expansion into jobs."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from vhct import config as vc
from vhct.objectives import OBJECTIVES
from vhct.registry import ALGORITHMS

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "config" / "tiny.yaml"


@pytest.fixture
def tiny() -> dict:
    return yaml.safe_load(TINY.read_text(encoding="utf-8"))


def check(config: dict) -> dict:
    vc.schema_validate(config)
    vc.check_config(config)
    return config


def test_shipped_configs_are_valid():
    for name in ("tiny", "config", "paper"):
        config = vc.load_config(REPO / "config" / f"{name}.yaml")
        assert config["figures"], name


def test_schema_enums_follow_the_registries():
    schema = vc.resolved_schema()
    props = schema["properties"]
    assert props["settings"]["additionalProperties"]["properties"]["algorithm"]["enum"] == sorted(ALGORITHMS)
    assert props["experiments"]["additionalProperties"]["properties"]["objective"]["enum"] == sorted(
        OBJECTIVES
    )


def test_schema_fills_defaults(tiny):
    tiny.pop("progress_every")
    tiny.pop("data")
    for exp in tiny["experiments"].values():  # the real-data experiments list data files
        exp.pop("data", None)
    check(tiny)
    assert tiny["progress_every"] == 500
    assert tiny["data"] == {"mirror": None, "files": {}}


@pytest.mark.parametrize(
    ("mutate", "key", "text"),
    [
        (lambda c: c["settings"]["POO"].update(algorithm="NOPE"), "settings/POO/algorithm", "NOPE"),
        (lambda c: c["experiments"]["garland"].update(horizon=-5), "experiments/garland/horizon", "-5"),
        (lambda c: c["experiments"]["garland"].pop("noise"), "experiments/garland", "noise"),
        (
            lambda c: c["experiments"]["garland"].update(objective="nope"),
            "experiments/garland/objective",
            "nope",
        ),
        (
            lambda c: c["settings"]["VHCT-rho0.75"]["params"].update(rho=1.5),
            "settings/VHCT-rho0.75/params/rho",
            "",
        ),
        (lambda c: c["experiments"]["garland"].update(seeds=0), "experiments/garland/seeds", ""),
        (
            lambda c: c["settings"]["POO"].update(resources={"runtime": 0}),
            "settings/POO/resources/runtime",
            "",
        ),
        (lambda c: c["figures"]["osc"].update(kind="movie"), "figures/osc/kind", "movie"),
        (lambda c: c.pop("figures"), "<root>", "figures"),
        (lambda c: c["settings"].update({"bad name": {"algorithm": "HCT"}}), "settings", "bad name"),
    ],
)
def test_schema_rejects_and_names_the_key(tiny, mutate, key, text):
    mutate(tiny)
    with pytest.raises(vc.ConfigError) as info:
        vc.schema_validate(tiny)
    assert f"config key {key}" in str(info.value)
    assert text in str(info.value)


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (
            lambda c: c["figures"]["regret"]["panels"][0].update(experiment="ghost"),
            "figures/regret/panels/0/experiment",
        ),
        (lambda c: c["settings"]["T-HOO-rho0.25"]["params"].update(c=0.1), "settings/T-HOO-rho0.25/params/c"),
        (lambda c: c["experiments"]["garland"]["settings"].append("ghost"), r"experiments/garland/settings/\d+"),
        (
            lambda c: c["figures"]["average"]["panels"][1].update(settings=["POO"]),
            "figures/average/panels/1/settings/0",
        ),
        (lambda c: c["figures"]["osc"]["panels"][0].update(setting="POO"), "figures/osc/panels/0/setting"),
        (lambda c: c["figures"]["osc"]["panels"][0].update(round=10_000), "figures/osc/panels/0/round"),
        (lambda c: c["experiments"]["garland"].update(data=["ghost"]), "experiments/garland/data/0"),
        (
            lambda c: c["experiments"]["garland"].update(objective_params={"dim": 3}),
            "experiments/garland/objective_params/dim",
        ),
        (
            lambda c: c["figures"]["function_1d"]["panels"][0].update(objective_params={"x": 1}),
            "figures/function_1d/panels/0/objective_params/x",
        ),
    ],
)
def test_semantic_checks_name_the_key(tiny, mutate, key):
    vc.schema_validate(tiny)
    mutate(tiny)
    with pytest.raises(vc.ConfigError, match=f"config key {key}:"):
        vc.check_config(tiny)


def test_duplicate_data_paths_are_rejected(tiny):
    spec = {"path": "x/file.bin", "urls": ["https://example.org/file.bin"], "md5": "0" * 32}
    tiny["data"] = {"files": {"a": dict(spec), "b": dict(spec)}}
    vc.schema_validate(tiny)
    with pytest.raises(vc.ConfigError, match="data/files/b/path"):
        vc.check_config(tiny)


def test_data_file_needs_a_checksum(tiny):
    tiny["data"] = {"files": {"a": {"path": "a.bin", "urls": ["https://example.org/a.bin"]}}}
    with pytest.raises(vc.ConfigError, match="data/files/a"):
        vc.schema_validate(tiny)


def test_run_jobs_expand_every_setting_and_seed(tiny):
    config = check(tiny)
    jobs = vc.run_jobs(config)
    expected = sum(len(e["settings"]) * len(vc.seeds(config, n)) for n, e in config["experiments"].items())
    assert len(jobs) == expected == len(set(jobs))
    assert vc.seeds(config, "counterexample") == [3, 7]
    assert vc.seeds(config, "garland") == [0, 1]
    assert ("counterexample", "VHCT-phi2overh", 7) in jobs
    assert vc.run_jobs(config, ["rastrigin-high-noise"]) == [
        ("rastrigin-high-noise", s, k) for s in ("VHCT-rho0.75", "HCT-rho0.75") for k in (0, 1)
    ]


def test_run_spec_caps_the_horizon_and_copies_parameters(tiny):
    config = check(tiny)
    spec = vc.run_spec(config, "garland", "short", 1)
    assert spec["horizon"] == 20 and spec["algorithm"] == "T-HOO" and spec["seed"] == 1
    assert vc.run_spec(config, "garland", "POO", 0)["horizon"] == 60
    spec["params"]["rho"] = 0.9
    assert config["settings"]["short"]["params"]["rho"] == 0.5
    high = vc.run_spec(config, "rastrigin-high-noise", "HCT-rho0.75", 0)
    assert high["noise"] == 0.5 and high["objective_params"] == {"dim": 2}


def test_figure_spec_carries_experiment_info(tiny):
    config = check(tiny)
    assert vc.figure_experiments(config, "regret") == ["garland", "counterexample"]
    assert vc.figure_experiments(config, "function_2d") == []
    spec = vc.figure_spec(config, "regret")
    assert set(spec["experiments"]) == {"garland", "counterexample"}
    assert spec["experiments"]["garland"]["settings"]["short"]["horizon"] == 20
    osc = vc.figure_spec(config, "osc")
    assert osc["panels"][0]["run"]["seed"] == 1 and osc["panels"][0]["run"]["algorithm"] == "VHCT"


def test_data_files_of_an_experiment(tiny):
    spec = {"path": "landmine/LandmineData.mat", "urls": ["https://example.org/l.mat"], "md5": "a" * 32}
    tiny["data"] = {"files": {"landmine": spec}}
    tiny["experiments"]["garland"]["data"] = ["landmine"]
    tiny["experiments"]["mnist"].pop("data")
    config = check(tiny)
    assert vc.data_files(config, "garland") == ["landmine/LandmineData.mat"]
    assert vc.data_files(config, "counterexample") == []
    assert vc.data_spec(config, "landmine/LandmineData.mat")["md5"] == "a" * 32
    with pytest.raises(vc.ConfigError, match="data/files"):
        vc.data_spec(config, "missing.bin")


def test_paper_config_has_paper_scale():
    paper = vc.load_config(REPO / "config" / "paper.yaml")
    default = vc.load_config(REPO / "config" / "config.yaml")
    assert set(paper["figures"]) == set(default["figures"])
    for name, exp in paper["experiments"].items():
        assert vc.seeds(paper, name) == list(range(20)), name
        assert exp["horizon"] >= default["experiments"].get(name, exp)["horizon"]


def test_settings_may_declare_their_own_run_resources(tiny):
    tiny["settings"]["POO"]["resources"] = {"runtime": 120, "mem_mb": 4000}
    assert check(tiny)["settings"]["POO"]["resources"]["runtime"] == 120
    paper = vc.load_config(REPO / "config" / "paper.yaml")
    assert paper["settings"]["BO"]["resources"]["runtime"] > paper["resources"]["run"]["runtime"]


def test_load_config_rejects_a_non_mapping(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(vc.ConfigError, match="mapping"):
        vc.load_config(path)
    bad = copy.deepcopy(yaml.safe_load(TINY.read_text(encoding="utf-8")))
    bad["experiments"]["garland"]["horizon"] = 0
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(vc.ConfigError, match="experiments/garland/horizon"):
        vc.load_config(path)
