"""Config loading: schema (with the registries' names), cross-reference checks, expansion into jobs."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from support import REPO, TINY

from vhct.objectives import OBJECTIVES
from vhct.optimizers.registry import ALGORITHM_TABLE
from vhct.pipeline import config as vc


@pytest.fixture
def tiny() -> dict:
    return yaml.safe_load(TINY.read_text(encoding="utf-8"))


def check(config: dict) -> vc.Config:
    return vc.validate_config(config)


def load(path: Path) -> vc.Config:
    """The model of one config file (and the files it extends), as the pipeline loads it; a config
    running an analysis plan (paper-local) validated without it, its seeds counted after the pilot's
    (its plan is built and checked in tests/unit/test_plan.py)."""
    return vc.load([path], plan=Path(path).name != "paper-local.yaml")[0]


def test_shipped_configs_are_valid():
    for name in ("tiny", "config", "paper", "paper-local"):
        assert load(REPO / "config" / f"{name}.yaml").figures, name


def test_a_job_reads_the_rules_model_back_from_snakemakes_plain_config():
    """Writer meets reader: the rules' model, handed to a job as Snakemake's plain ``config`` (the
    model's ``source``, pickled), is the same model there (jobs, specs, batches), the dict untouched."""
    import pickle

    cfg = load(TINY)
    plain = pickle.loads(pickle.dumps(cfg.source))
    before = copy.deepcopy(plain)
    back = vc.model(plain)
    assert plain == before
    assert (back.settings, back.experiments, back.figures) == (cfg.settings, cfg.experiments, cfg.figures)
    assert back.run_jobs() == cfg.run_jobs() and back.run_batches() == cfg.run_batches()
    assert [back.run_spec(*job) for job in back.run_jobs()] == [cfg.run_spec(*job) for job in cfg.run_jobs()]
    plain["experiments"]["garland"]["horizon"] = 0
    with pytest.raises(vc.ConfigError, match="experiments/garland/horizon"):
        vc.model(plain)


def test_names_are_checked_against_the_registries(tiny):
    """Algorithm and objective names come from the registries: an unknown one is refused, listing them."""
    tiny["settings"]["POO"]["algorithm"] = "NOPE"
    with pytest.raises(vc.ConfigError, match="config key settings/POO/algorithm: unknown algorithm") as info:
        vc.validate_config(copy.deepcopy(tiny))
    assert all(name in str(info.value) for name in ALGORITHM_TABLE)
    tiny["settings"]["POO"]["algorithm"] = "POO"
    tiny["experiments"]["garland"]["objective"] = "nope"
    with pytest.raises(vc.ConfigError, match="experiments/garland/objective: unknown objective") as info:
        vc.validate_config(tiny)
    assert all(name in str(info.value) for name in OBJECTIVES)


def test_the_shipped_schema_is_the_models():
    """One source: the schema file is generated from the model (python -m vhct.pipeline.config --schema)."""
    from vhct.pipeline.config.schema import schema_text

    assert vc.SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()
    schema = vc.json_schema()
    assert set(schema["required"]) == {"settings", "experiments", "figures"}
    assert schema["$defs"]["Experiment"]["properties"]["horizon"] == {
        "maximum": vc.MAX_HORIZON,
        "minimum": 1,
        "title": "Horizon",
        "type": "integer",
    }


def drop_experiments(config: dict, names: list[str]) -> None:
    """Remove experiments and the figures that draw them."""
    for name in names:
        config["experiments"].pop(name)
    for figure, spec in list(config["figures"].items()):
        if any(panel.get("experiment") in names for panel in spec["panels"]):
            config["figures"].pop(figure)


def test_schema_fills_defaults(tiny):
    tiny.pop("progress_every")
    tiny.pop("data")
    # the real-data experiments read declared data files only
    drop_experiments(tiny, [name for name, exp in tiny["experiments"].items() if exp.get("data")])
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
        vc.validate_config(tiny)
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
        (
            lambda c: c["experiments"]["garland"]["settings"].append("ghost"),
            r"experiments/garland/settings/\d+",
        ),
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
    vc.validate_config(tiny)
    mutate(tiny)
    with pytest.raises(vc.ConfigError, match=f"config key {key}:"):
        vc.validate_config(tiny)


def test_duplicate_data_paths_are_rejected(tiny):
    spec = {"path": "x/file.bin", "urls": ["https://example.org/file.bin"], "md5": "0" * 32}
    tiny["data"] = {"files": {"a": dict(spec), "b": dict(spec)}}
    with pytest.raises(vc.ConfigError, match="data/files/b/path"):
        vc.validate_config(tiny)


def test_data_file_needs_a_checksum(tiny):
    tiny["data"] = {"files": {"a": {"path": "a.bin", "urls": ["https://example.org/a.bin"]}}}
    with pytest.raises(vc.ConfigError, match="data/files/a"):
        vc.validate_config(tiny)


def test_run_jobs_expand_every_setting_and_seed(tiny):
    cfg = check(tiny)
    jobs = cfg.run_jobs()
    expected = sum(len(e.settings) * len(cfg.seeds(n)) for n, e in cfg.experiments.items())
    assert len(jobs) == expected == len(set(jobs))
    assert cfg.seeds("counterexample") == [3, 7]
    assert cfg.seeds("garland") == [0, 1]
    assert ("counterexample", "VHCT-phi2overh", 7) in jobs
    assert cfg.run_jobs(["rastrigin-high-noise"]) == [
        ("rastrigin-high-noise", s, k) for s in ("VHCT-rho0.75", "HCT-rho0.75") for k in (0, 1)
    ]


def test_run_spec_caps_the_horizon_and_copies_parameters(tiny):
    cfg = check(tiny)
    spec = cfg.run_spec("garland", "short", 1)
    assert spec.horizon == 20 and spec.algorithm == "T-HOO" and spec.seed == 1
    assert cfg.run_spec("garland", "POO", 0).horizon == 60
    spec.params["rho"] = 0.9
    assert cfg.settings["short"].params["rho"] == 0.5
    assert cfg.run_spec("garland", "short", 1).params["rho"] == 0.5
    high = cfg.run_spec("rastrigin-high-noise", "HCT-rho0.75", 0)
    assert high.noise == 0.5 and high.objective_params == {"dim": 2}


def test_an_experiments_caps_override_the_settings_own_there_only(tiny):
    tiny["experiments"]["garland"]["caps"] = {"short": {"max_horizon": 40, "max_seeds": 1}}
    cfg = check(tiny)
    assert cfg.run_spec("garland", "short", 0).horizon == 40  # the setting's own cap is 20
    assert cfg.setting_seeds("garland", "short") == [0]
    assert [k for e, s, k in cfg.run_jobs(["garland"]) if s == "short"] == [0]
    assert cfg.setting_info("garland")["short"].horizon == 40
    where = cfg.cap_key("garland", "short", "max_horizon")
    assert where == "experiments/garland/caps/short/max_horizon"
    # the setting's cap still holds where the experiment sets none; an uncapped setting has no key
    where = cfg.cap_key("garland-beyond", "GP-Optuna", "max_horizon")
    assert where == "settings/GP-Optuna/max_horizon"
    assert cfg.run_horizon("garland-beyond", "GP-Optuna") == 12
    assert cfg.cap_key("garland", "POO", "max_seeds") is None
    # a cap above the experiment's horizon runs the experiment's horizon
    tiny["experiments"]["garland"]["caps"] = {"short": {"max_horizon": 10_000}}
    assert check(tiny).run_horizon("garland", "short") == 60


def test_caps_of_a_setting_the_experiment_does_not_run_are_rejected(tiny):
    tiny["experiments"]["garland"]["caps"] = {"BO": {"max_horizon": 5}}
    with pytest.raises(vc.ConfigError, match="key experiments/garland/caps/BO: setting 'BO' is not run"):
        vc.validate_config(tiny)
    tiny["experiments"]["garland"]["caps"] = {"short": {"max_rounds": 5}}
    with pytest.raises(vc.ConfigError, match="experiments/garland/caps/short"):
        vc.validate_config(tiny)


def test_a_cap_too_long_for_memory_names_the_key_that_sets_it(tiny):
    exp = tiny["experiments"]["garland-beyond"]
    exp["horizon"] = vc.MAX_HORIZON
    exp["caps"] = {s: {"max_horizon": 10} for s in exp["settings"]}
    exp["caps"]["Random"] = {"max_horizon": vc.MAX_HORIZON}
    with pytest.raises(
        vc.ConfigError, match="config key experiments/garland-beyond/caps/Random/max_horizon: a run of"
    ):
        vc.validate_config(tiny)


def test_figure_spec_carries_experiment_info(tiny):
    cfg = check(tiny)
    drawn = cfg.figure_settings("regret")
    assert list(drawn) == ["garland", "counterexample"]
    panels = tiny["figures"]["regret"]["panels"]
    assert drawn["garland"] == panels[0]["settings"]  # the panel's own list, not every setting
    assert set(drawn["garland"]) < set(cfg.experiments["garland"].settings)
    assert drawn["counterexample"] == list(cfg.experiments["counterexample"].settings)  # no list: all
    assert cfg.figure_settings("function_2d") == {}
    spec = cfg.figure_spec("regret")
    assert set(spec.experiments) == {"garland", "counterexample"}
    assert spec.experiments["garland"].settings["short"].horizon == 20
    osc = cfg.figure_spec("osc")
    assert osc.panels[0].run.seed == 1 and osc.panels[0].run.algorithm == "VHCT"


def test_data_files_of_an_experiment(tiny):
    spec = {"path": "landmine/LandmineData.mat", "urls": ["https://example.org/l.mat"], "md5": "a" * 32}
    tiny["data"] = {"files": {"landmine": spec}}
    tiny["experiments"]["garland"]["data"] = ["landmine"]
    drop_experiments(tiny, ["mnist"])  # its files are no longer declared
    cfg = check(tiny)
    assert cfg.data_files("garland") == ["landmine/LandmineData.mat"]
    assert cfg.data_files("counterexample") == []
    assert cfg.data_spec("landmine/LandmineData.mat")["md5"] == "a" * 32
    with pytest.raises(vc.ConfigError, match="data/files"):
        cfg.data_spec("missing.bin")


def test_paper_config_has_paper_scale():
    paper = load(REPO / "config" / "paper.yaml")
    default = load(REPO / "config" / "config.yaml")
    assert set(paper.figures) == set(default.figures)
    for name, exp in paper.experiments.items():
        assert paper.seeds(name) == list(range(20)), name
        assert exp.horizon >= default.experiments.get(name, exp).horizon


def test_settings_may_declare_their_own_run_resources(tiny):
    tiny["settings"]["POO"]["resources"] = {"runtime": 120, "mem_mb": 4000}
    assert check(tiny).settings["POO"].resources.runtime == 120
    paper = load(REPO / "config" / "paper.yaml")
    assert paper.settings["BO"].resources.runtime > paper.resources.run.runtime
    assert paper.resource("run", "runtime", "garland", "BO") == paper.settings["BO"].resources.runtime


def test_load_config_rejects_a_non_mapping(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(vc.ConfigError, match="mapping"):
        load(path)
    bad = copy.deepcopy(yaml.safe_load(TINY.read_text(encoding="utf-8")))
    bad["experiments"]["garland"]["horizon"] = 0
    path.write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(vc.ConfigError, match="experiments/garland/horizon"):
        load(path)


# ----------------------------------------------------------------------------- config files


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n# and another\n"])
def test_an_empty_or_comment_only_file_is_rejected_naming_it(tmp_path, text):
    path = write(tmp_path / "empty.yaml", text)
    with pytest.raises(vc.ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: the config file is empty")
    assert "settings, experiments, figures" in message and "not merged" in message


def test_a_yaml_syntax_error_names_file_line_and_column(tmp_path):
    path = write(tmp_path / "broken.yaml", "progress_every: 5\nsettings:\n  a: {algorithm: VHCT\n  b: [\n")
    with pytest.raises(vc.ConfigError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:4:4: YAML syntax error: ")
    assert "flow mapping" in str(info.value)


def test_a_non_mapping_file_is_rejected_naming_it(tmp_path):
    path = write(tmp_path / "list.yaml", "- 1\n- 2\n")
    with pytest.raises(vc.ConfigError, match=f"^{path}:1: the config file does not hold a mapping"):
        load(path)


@pytest.mark.parametrize("text", ["{}\n", "progress_every: 5\n"])
def test_a_file_without_the_sections_names_the_missing_keys(tmp_path, text):
    """Not the default config silently: the default is only used when no file is given."""
    path = write(tmp_path / "partial.yaml", text)
    with pytest.raises(vc.ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(
        f"{path}: config key <root>: missing top-level key(s) settings, experiments, figures"
    )
    assert "not merged" in message and "\n" not in message
    assert info.value.key == ()


def test_a_top_level_typo_is_one_line_with_file_line_and_suggestion(tmp_path):
    text = TINY.read_text(encoding="utf-8").replace("\nexperiments:\n", "\nexperiment:\n")
    path = write(tmp_path / "typo.yaml", text)
    line = text.splitlines().index("experiment:") + 1
    with pytest.raises(vc.ConfigError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: config key experiment: unknown key 'experiment'")
    assert "did you mean 'experiments'?" in message
    assert "\n" not in message and len(message) < 300  # no schema dump


def test_errors_point_at_the_line_of_the_offending_key(tmp_path, tiny):
    tiny["experiments"]["garland"]["horizon"] = -5
    text = yaml.safe_dump(tiny, sort_keys=False)
    path = write(tmp_path / "bad.yaml", text)
    lines = text.splitlines()
    garland = lines.index("  garland:")
    horizon = garland + next(i for i, s in enumerate(lines[garland:]) if s.strip().startswith("horizon:"))
    with pytest.raises(
        vc.ConfigError, match=f"^{path}:{horizon + 1}: config key experiments/garland/horizon: "
    ):
        load(path)
    # a semantic check (not the schema) is located the same way
    tiny["experiments"]["garland"]["horizon"] = 60
    tiny["figures"]["regret"]["panels"][0]["experiment"] = "ghost"
    text = yaml.safe_dump(tiny, sort_keys=False)
    path = write(tmp_path / "ghost.yaml", text)
    line = next(i for i, s in enumerate(text.splitlines()) if s.strip() == "- experiment: ghost") + 1
    with pytest.raises(
        vc.ConfigError, match=f"^{path}:{line}: config key figures/regret/panels/0/experiment: "
    ):
        load(path)


def test_with_several_files_the_error_names_the_file_that_sets_the_key(tmp_path):
    override = write(tmp_path / "override.yaml", "experiments:\n  garland:\n    seeds: 0\n")
    config = vc.merged_files([TINY, override])[0]
    assert (
        config["experiments"]["garland"]["seeds"] == 0 and config["experiments"]["garland"]["horizon"] == 60
    )
    with pytest.raises(vc.ConfigError, match=f"^{override}:3: config key experiments/garland/seeds: "):
        vc.validate_config(config, [TINY, override])


def test_the_command_line_check(tmp_path, capsys):
    assert vc.main([str(TINY)]) == 0
    assert capsys.readouterr().out.startswith(f"{TINY}: valid (9 experiments, ")
    path = write(tmp_path / "c.yaml", "progress_every: 5\n")
    assert vc.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: config key <root>: missing top-level key(s)") and err.count("\n") == 1


def test_paper_local_is_paper_scale_except_bo_and_mnist():
    """paper-local extends paper.yaml: same horizons, its seeds the analysis plan's (here, without the
    plan: paper.yaml's 20 per setting, from the first confirmatory seed its figure names, 800); BO and
    Optuna's GP sampler capped, MNIST on a training subset, on the real-data tasks the rho = 0.5
    variants only (its item 5)."""
    paper = load(REPO / "config" / "paper.yaml")
    local = load(REPO / "config" / "paper-local.yaml")
    bo = {"BO", "BO-restarts5", "GP-Optuna"}  # the settings whose cost sets their horizon or seeds
    real = {"landmine", "mnist"}
    assert "base" not in local.source and local.base is None
    assert set(local.experiments) == set(paper.experiments)
    for name, exp in local.experiments.items():
        # after the pilot's 0-19 and the 0-599 of the findings shipped before (audit.seen)
        assert local.seeds(name) == list(range(800, 820)), name
        # every setting runs at least the paper's 20 of them (test_claim_seeds: where a claim reads it)
        assert all(len(local.setting_seeds(name, s)) >= 20 for s in exp.settings), name
        if name != "mnist":
            assert exp.horizon == paper.experiments[name].horizon, name
        ours = [s for s in exp.settings if s not in bo]
        if name not in real:
            assert ours == [s for s in paper.experiments[name].settings if s not in bo], name
    for name in real:  # the paper's algorithms, today's baselines and the paper's rho = 0.5 variant
        assert set(local.experiments[name].settings) <= set(paper.experiments[name].settings), name
        assert set(local.experiments[name].settings) - bo == {
            "VHCT-rho0.75",
            "HCT-rho0.75",
            "T-HOO-rho0.25",
            "POO",
            "PCT",
            "Random",
            "TPE",
            "CMA-ES",
            "VHCT-rho0.5",
            "HCT-rho0.5",
        }, name
    # MNIST in the paper's official mode, on a subset of the training images (issue 32)
    mnist = local.experiments["mnist"]
    assert mnist.objective_params["mode"] == "official" and 0 < mnist.objective_params["n_train"] < 60000
    assert {"mnist-train-images", "mnist-train-labels"} <= set(mnist.data)
    # BO to MNIST's horizon, stopped by its cap before the horizon on Landmine and Garland; Optuna's GP
    # sampler likewise; every baseline and BO runs the experiment's 20 seeds, the claims' minimum (issue
    # 29: no cap below it); GPyOpt's default fit (BO-restarts5) on Garland only (the budget, item 1)
    assert local.run_horizon("mnist", "BO") == local.run_horizon("mnist", "GP-Optuna") == mnist.horizon
    for name in ("garland", "landmine"):
        for setting in ("BO", "GP-Optuna"):
            cap = local.setting_cap(name, setting, "max_horizon")
            assert (
                cap is not None and local.run_horizon(name, setting) == cap < local.experiments[name].horizon
            )
    for name in ("garland", "landmine", "mnist"):
        for setting in ("Random", "TPE", "CMA-ES", "GP-Optuna", "BO"):
            assert len(local.setting_seeds(name, setting)) == 20, (name, setting)
    assert len(local.setting_seeds("garland", "BO-restarts5")) == 20
    assert local.run_horizon("garland", "BO-restarts5") == 50
    assert all("BO-restarts5" not in local.experiments[name].settings for name in real)
    assert {k: v for k, v in local.settings.items() if k not in bo} == {
        k: v for k, v in paper.settings.items() if k not in bo
    }


def test_a_base_file_is_read_first_and_updated_key_by_key(tmp_path, tiny):
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(tiny))
    (tmp_path / "sub").mkdir()
    child = tmp_path / "sub" / "child.yaml"
    child.write_text("base: ../base.yaml\nsettings:\n  POO: {params: {rho_max: 0.5}}\nprogress_every: 7\n")
    cfg = load(child)
    assert cfg.progress_every == 7
    assert cfg.source["settings"]["POO"] == {"algorithm": "POO", "params": {"rho_max": 0.5, "nu_max": 1.0}}
    assert cfg.experiments == check(copy.deepcopy(tiny)).experiments
    assert vc.merged_files([child])[1] == [(tmp_path / "base.yaml").resolve(), child.resolve()]


def test_a_looping_or_missing_base_is_an_error_naming_the_file(tmp_path):
    (tmp_path / "a.yaml").write_text("base: b.yaml\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\n")
    with pytest.raises(vc.ConfigError, match="loops"):
        load(tmp_path / "a.yaml")
    (tmp_path / "c.yaml").write_text("base: nope.yaml\n")
    with pytest.raises(vc.ConfigError, match="nope.yaml"):
        load(tmp_path / "c.yaml")


def test_runs_per_job_setting_wins_over_experiment(tiny):
    tiny["experiments"]["garland"]["runs_per_job"] = 2
    tiny["settings"]["POO"]["runs_per_job"] = 1
    cfg = check(tiny)
    assert cfg.runs_per_job("garland", "VHCT-rho0.75") == 2
    assert cfg.runs_per_job("garland", "POO") == 1
    assert cfg.runs_per_job("counterexample", "VHCT-rho0.75") == 1
    tiny["experiments"]["garland"]["runs_per_job"] = 0
    with pytest.raises(vc.ConfigError, match="runs_per_job"):
        check(tiny)


def test_run_batches_cover_each_batched_run_once_by_setting(tiny):
    tiny["experiments"]["garland"]["seeds"] = 3
    tiny["experiments"]["garland"]["runs_per_job"] = 2
    tiny["settings"]["POO"]["runs_per_job"] = 1
    tiny["experiments"]["counterexample"]["runs_per_job"] = 3  # explicit seeds [3, 7]
    cfg = check(tiny)
    batches = cfg.run_batches()
    first, second = batches[:2]
    assert (first.experiment, first.setting, second.setting) == ("garland", "VHCT-rho0.25", "VHCT-rho0.25")
    assert (first.index, first.seeds, second.index, second.seeds) == (0, (0, 1), 1, (2,))
    counter = [b.seeds for b in batches if b.experiment == "counterexample"]
    assert counter[:2] == [(3, 7), (3, 7)]  # one batch per setting
    assert [b.seeds for b in batches if (b.experiment, b.setting) == ("garland", "POO")] == [(0,), (1,), (2,)]
    batched = [(b.experiment, b.setting, k) for b in batches for k in b.seeds]
    assert len(batched) == len(set(batched)) and set(batched) == set(cfg.run_jobs())  # each run once
    for batch in batches:  # a batch's file is named by its seeds, its job runs them
        job = cfg.run_job(batch)
        assert job.seeds == list(batch.seeds) and {s.setting for s in job.runs} == {batch.setting}
        name = job.path().rsplit("/", 1)[1]
        assert name.startswith(f"seeds{batch.seeds[0]}-{batch.seeds[-1]}") and name.endswith(".npz")


def test_adding_a_setting_or_seeds_leaves_every_other_batch_as_it_was(tiny):
    """Issue 40, item 4: batches are keyed by setting, so a setting added (anywhere in the list) or
    removed changes no other setting's batch, and more seeds add chunks after the filled ones."""
    tiny["experiments"]["garland"]["seeds"] = 3
    tiny["experiments"]["garland"]["runs_per_job"] = 2
    before = set(check(tiny).run_batches())
    settings = tiny["experiments"]["garland"]["settings"]
    tiny["settings"]["VHCT-rho0.9"] = {**tiny["settings"]["VHCT-rho0.75"], "params": {"rho": 0.9}}
    settings.insert(1, "VHCT-rho0.9")
    added = set(check(tiny).run_batches())
    assert before < added and {b.setting for b in added - before} == {"VHCT-rho0.9"}
    settings.remove("short")
    for panel in tiny["figures"]["regret"]["panels"]:
        panel["settings"] = [s for s in panel.get("settings", []) if s != "short"] or panel.get("settings")
    assert {b for b in before if b.setting != "short"} <= set(check(tiny).run_batches())
    tiny["experiments"]["garland"]["seeds"] = 5
    grown = set(check(tiny).run_batches())
    garland = [b for b in before if b.experiment == "garland" and b.setting != "short"]
    kept = [b for b in garland if len(b.seeds) == 2]  # the full chunks are kept; the last one grows
    assert kept and set(kept) <= grown


def test_a_setting_with_its_own_runs_per_job_is_chunked_by_it(tiny):
    tiny["experiments"]["garland"]["seeds"] = 3
    tiny["experiments"]["garland"]["runs_per_job"] = 4
    tiny["settings"]["short"]["runs_per_job"] = 2
    batches = [b for b in check(tiny).run_batches() if b.experiment == "garland"]
    short = [b.seeds for b in batches if b.setting == "short"]
    assert short == [(0, 1), (2,)]
    assert all(len(b.seeds) == 3 for b in batches if b.setting != "short")
