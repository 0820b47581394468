"""Helpers shared by the unit and integration tests (importable: pytest puts ``tests`` on the path).

Paths of the checkout (``REPO``, ``CONFIG_DIR``, ``TINY``), a Snakemake runner for the tiny
pipeline, the one ask/tell driver of an optimizer (``drive``, with ``noisy`` rewards and the
``garland`` test function), the registered algorithms of a kind (``algorithms_of``) and how to build
any of them cheaply (``quick_optimizer``), and small files with the real data formats, generated at
test time:
``write_landmine_mat`` writes a MATLAB file shaped like ``LandmineData.mat`` (``feature`` and
``label``: 1 x n_fields cell arrays of (n, 9) floats and (n, 1) 0/1 labels);
``write_mnist_dir`` writes gzip-compressed IDX files with MNIST's names, magic numbers and
layout. Both carry a learnable signal so an objective's value depends on its arguments.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import math
import os
import re
import signal
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.io
import yaml

LANDMINE_FEATURES = 9
IMAGE_MAGIC = 2051
LABEL_MAGIC = 2049
SIDE = 28
N_CLASSES = 10
MNIST_NAMES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def write_landmine_mat(path: Path, n_fields: int = 3, n_per_field: int = 80, seed: int = 0) -> Path:
    """Write a small Landmine-like .mat file: positives (~25%) are shifted in a few features."""
    rng = np.random.default_rng(seed)
    features = np.empty((1, n_fields), dtype=object)
    labels = np.empty((1, n_fields), dtype=object)
    for k in range(n_fields):
        y = (rng.random(n_per_field) < 0.25).astype(np.uint8)
        y[:4] = [1, 1, 0, 0]  # both classes, enough of each to stratify
        x = rng.normal(size=(n_per_field, LANDMINE_FEATURES))
        x[:, :3] += 1.2 * y[:, None] * rng.normal(1.0, 0.5, size=(n_per_field, 3))
        features[0, k] = x
        labels[0, k] = y.reshape(-1, 1)
    scipy.io.savemat(path, {"feature": features, "label": labels})
    return path


def idx_images_bytes(images: np.ndarray, magic: int = IMAGE_MAGIC) -> bytes:
    """IDX3 bytes of uint8 images of shape (n, rows, cols)."""
    n, rows, cols = images.shape
    return struct.pack(">IIII", magic, n, rows, cols) + images.astype(np.uint8).tobytes()


def idx_labels_bytes(labels: np.ndarray, magic: int = LABEL_MAGIC) -> bytes:
    """IDX1 bytes of uint8 labels of shape (n,)."""
    return struct.pack(">II", magic, len(labels)) + labels.astype(np.uint8).tobytes()


def synthetic_digits(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Images whose class shows as a bright horizontal band at a class-specific height, plus noise."""
    labels = rng.integers(0, N_CLASSES, size=n).astype(np.uint8)
    images = rng.integers(0, 60, size=(n, SIDE, SIDE)).astype(np.uint8)
    for i, c in enumerate(labels):
        row = 2 + 2 * int(c)
        images[i, row : row + 3, 4:24] = rng.integers(180, 256, size=(3, 20))
    return images, labels


def write_mnist_dir(folder: Path, n_train: int = 120, n_test: int = 150, seed: int = 0) -> Path:
    """Write the four MNIST .gz IDX files (with ``n_train`` and ``n_test`` images) into ``folder``."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("test", n_test)):
        images, labels = synthetic_digits(n, rng)
        image_name, label_name = MNIST_NAMES[split]
        (folder / image_name).write_bytes(gzip.compress(idx_images_bytes(images)))
        (folder / label_name).write_bytes(gzip.compress(idx_labels_bytes(labels)))
    return folder


#: the checkout under test and its configs
REPO = Path(__file__).resolve().parents[1]
CONFIG_DIR = REPO / "config"
#: the test configuration of the pipeline
TINY = CONFIG_DIR / "tiny.yaml"


def clean_env() -> dict[str, str]:
    """This process's environment without a data mirror (the test configs name their own)."""
    return {k: v for k, v in os.environ.items() if k != "VHCT_DATA_MIRROR"}


def fixture_config(folder: Path) -> Path:
    """Write fixture data files into ``folder/mirror`` and a tiny config that fetches them.

    Each data file's only URL points at a missing file (an unreachable official source), so
    the download stage must fall back to the mirror; its checksum is the fixture's sha256.
    """
    mirror = folder / "mirror"
    (mirror / "landmine").mkdir(parents=True)
    write_landmine_mat(mirror / "landmine" / "LandmineData.mat")
    write_mnist_dir(mirror / "mnist")
    config = yaml.safe_load(TINY.read_text(encoding="utf-8"))
    config["data"]["mirror"] = str(mirror)
    for spec in config["data"]["files"].values():
        source = mirror / spec["path"]
        for key in ("sha256", "md5", "content_sha256"):
            spec.pop(key, None)
        spec["sha256"] = hashlib.sha256(source.read_bytes()).hexdigest()
        spec["urls"] = [(folder / "offline" / spec["path"]).as_uri()]
    # results/, figures/ and logs/ themselves (as the default config), where the tests look for them;
    # named folders per config: tests/integration/test_side_by_side.py
    config["output"] = ""
    path = folder / "tiny-fixtures.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# ---------------------------------------------------------------- running the pipeline

BIN = Path(sys.executable).parent
SNAKEMAKE = str(BIN / "snakemake")
CORES = "2"
#: umask of every Snakemake run here: outputs must then be readable by group and others (0644)
UMASK = 0o022


def snakemake(workdir: Path, *args: str, configfile: Path = TINY) -> subprocess.CompletedProcess:
    cmd = [
        SNAKEMAKE,
        "--snakefile",
        str(REPO / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
        "--cores",
        CORES,
        *args,
    ]
    return subprocess.run(
        cmd, capture_output=True, text=True, check=False, env=clean_env(), preexec_fn=set_umask
    )


#: a job of a Snakemake dry run's listing: its rule's line ("rule figure:", "localrule all:"),
#: indented where it is one of a group job's (a profile's bundle)
_JOB = re.compile(r"^ *(?:local)?rule (\S+):$", re.MULTILINE)
_OUTPUT = re.compile(r"^\s+output: (.*)$", re.MULTILINE)


def planned(result: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """What a Snakemake dry run (``-n``) plans: rule -> the output files of its jobs, in the listing's
    order (a rule whose jobs write nothing, such as ``all``, with an empty list)."""
    text = result.stdout + result.stderr
    starts = [m.start() for m in _JOB.finditer(text)] + [len(text)]
    plan: dict[str, list[str]] = {}
    for start, end in itertools.pairwise(starts):
        block = text[start:end]
        outputs = _OUTPUT.search(block)
        plan.setdefault(_JOB.search(block)[1], []).extend(outputs[1].split(", ") if outputs else [])
    return plan


def batch_of(config, experiment: str, setting: str, seed: int) -> str:
    """The batch file of the run store (``vhct.pipeline.store``) that holds the run of ``seed`` of
    ``setting`` in ``experiment``, as ``config`` (a loaded ``vhct.pipeline.config.Config``) asks it."""
    jobs = config.batch_jobs(experiment)
    (path,) = [p for p in config.run_paths(experiment)[setting] if seed in jobs[p].seeds]
    return path


def set_umask() -> None:
    os.umask(UMASK)


def ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def interruptible() -> None:
    """Child set-up of an interrupted Snakemake: the test's umask, and Ctrl-C handled by default.

    A command started in the background of a non-interactive shell (``cmd &``, as CI runners
    and ``nohup`` do) inherits SIGINT *ignored*; Python then never raises KeyboardInterrupt and
    Snakemake would run to the end despite the simulated Ctrl-C.
    """
    set_umask()
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def algorithms_of(*classes: type) -> list[str]:
    """The registered algorithms whose optimizer is one of ``classes`` or a subclass, in the
    registry's order: a test meant for every algorithm of a kind parametrizes over this, so a new
    registry row of that kind is tested without editing the test. A row whose target is a factory
    (VHCT, HCT) counts by the class its return annotation names."""
    import inspect

    from vhct.optimizers.registry import ALGORITHM_TABLE

    def made(target) -> type:
        if isinstance(target, type):
            return target
        returned = inspect.signature(target).return_annotation
        return getattr(sys.modules[target.__module__], returned) if isinstance(returned, str) else returned

    return [name for name, row in ALGORITHM_TABLE.items() if issubclass(made(row.load()), classes)]


def hierarchical_algorithms() -> list[str]:
    """Every registered hierarchical-bandit algorithm: a tree search (VHCT, HCT, T-HOO) or a
    portfolio of them (POO, PCT); numpy only and fast, unlike the BO and Optuna baselines."""
    from vhct.optimizers.parallel import _Portfolio
    from vhct.optimizers.tree import TreeSearch

    return algorithms_of(TreeSearch, _Portfolio)


def run_spec(
    algorithm: str,
    objective: str,
    horizon: int,
    seed: int,
    *,
    params: dict | None = None,
    objective_params: dict | None = None,
    noise: float = 0.05,
    setting: str | None = None,
):
    """A run's spec (``vhct.pipeline.records.RunSpec``) outside a config: the experiment is named
    after the objective, the setting after the algorithm unless given, no progress lines."""
    from vhct.pipeline.records import RunSpec

    return RunSpec(
        experiment=objective,
        setting=setting or algorithm,
        algorithm=algorithm,
        params=params or {},
        objective=objective,
        objective_params=objective_params or {},
        noise=noise,
        horizon=horizon,
        seed=seed,
        progress_every=0,
    )


def run_job_of(*specs):
    """What a run job is asked of ``specs`` (runs alike but for their seed) now: the installed run
    code's hash and package versions, no data files (``vhct.pipeline.store.RunJob``)."""
    from vhct.pipeline.store import RunJob
    from vhct.pipeline.versions import package_versions, run_source

    return RunJob(
        runs=list(specs), source=run_source(specs[0].algorithm), versions=package_versions(), data={}
    )


def made_up_record(seed: int, rounds: int, wall_seconds: float = 0.5, regret_from: float = 1.0):
    """A valid record of a made-up real-data run (f* unknown, regret against ``regret_from``) of
    ``rounds`` rounds, made by the installed run code and package versions."""
    from vhct.pipeline.records import RunRecord
    from vhct.pipeline.versions import package_versions, run_source

    return RunRecord(
        run=run_spec("HCT", "landmine", rounds, seed, noise=0.0, setting="s"),
        seed=seed,
        rounds=rounds,
        wall_seconds=wall_seconds,
        python="3.11",
        host="test",
        versions=package_versions(),
        source=run_source("HCT"),
        data={},
        f_star=None,
        regret_from=regret_from,
        regret_reference="best_observed",
        metadata={"seed": seed, "f_star": None},
    )


def write_made_up_batch(path: Path, tables, records) -> str:
    """Write made-up run tables (mappings of columns) and their records as a batch file of the run
    store, by its one writer (``vhct.pipeline.store.write_batch``); a table without ``depth`` or
    ``guarantee`` stores NaN and 0 (a method that records neither). Returns the path."""
    from vhct.pipeline.store import write_batch

    filled = []
    for table in tables:
        rounds = len(table["value"])
        defaults = {"depth": np.full(rounds, np.nan), "guarantee": np.zeros(rounds, dtype=np.int8)}
        filled.append({**defaults, **{k: np.asarray(v) for k, v in dict(table).items()}})
    write_batch(path, filled, records)
    return str(path)


# ---------------------------------------------------------------- driving an optimizer


def conditions_of(claims) -> dict:
    """Made-up conditions of a claims file (Garland at the paper's low noise) for every experiment its
    ``claims`` (records) read: the claims file requires one for each."""
    names = sorted({e for claim in claims for e in claim.experiments_read})
    return {e: {"objective": "garland", "noise": 0.05, "source": "made up"} for e in names}


#: the words a headline of the audit gives a count beside (``vhct.reporting.render.headline``)
HEADLINE_WORDS = (
    "seeds",
    "audited",
    "readings",
    "reproduced",
    "not reproduced",
    "inconclusive",
    "readings disagree",
    "statement flips",
)


def headline_counts(said: str) -> dict[str, int]:
    """Each count a headline states, by the word after it ("20 seeds", "1 not reproduced"): a test checks
    the counts of the record it rendered, not the sentence's wording."""
    import re

    words = "|".join(sorted(map(re.escape, HEADLINE_WORDS), key=len, reverse=True))
    return {word: int(n) for n, word in re.findall(rf"(\d+) ({words})\b", said)}


def drive(opt, reward: Callable[[np.ndarray], float], rounds: int) -> np.ndarray:
    """The ask/tell loop every optimizer test runs: ``rounds`` times ``x = opt.ask()`` then
    ``opt.tell(x, reward(x))``; returns the asked points, one row per round. ``reward`` may draw
    noise of its own (:func:`noisy`)."""
    points = np.empty((rounds, opt.dim))
    for t in range(rounds):
        x = opt.ask()
        points[t] = x
        opt.tell(x, reward(x))
    return points


def noisy(
    f: Callable[[np.ndarray], float], rng: np.random.Generator, half_width: float, scale: float = 1.0
) -> Callable[[np.ndarray], float]:
    """The reward ``scale * (f(x) + u)``, ``u`` uniform on [-half_width, half_width] drawn from
    ``rng`` at each call (after ``f``): the bounded reward noise of the paper's experiments."""
    return lambda x: scale * (f(x) + rng.uniform(-half_width, half_width))


def garland(x) -> float:
    """Garland, x (1 - x) (4 - sqrt(|sin(60 x)|)) (``vhct.objectives.Garland``'s formula), as a
    product over the coordinates of ``x`` so that it serves any box in [0, 1]^d; written out here
    so the optimizers' tests do not depend on the objectives layer."""
    return math.prod(t * (1.0 - t) * (4.0 - math.sqrt(abs(math.sin(60.0 * t)))) for t in map(float, x))


#: constructor parameters that keep a test run of an algorithm short (the GP baselines refit
#: their model at every round after their initial design); an algorithm not named takes defaults
QUICK_PARAMS = {
    "BO": {"n_init": 3},
    "TPE": {"n_startup_trials": 4},
    "GP-Optuna": {"n_startup_trials": 4},
}
#: the algorithms whose rounds cost a model fit each (BO, Optuna's GP): tests run few of them
SLOW_ALGORITHMS = frozenset({"BO", "GP-Optuna"})
#: the rounds a test runs of a slow algorithm at most
SLOW_ROUNDS = 6


def quick_rounds(name: str, rounds: int) -> int:
    """``rounds``, or at most :data:`SLOW_ROUNDS` of an algorithm that fits a model every round."""
    return min(rounds, SLOW_ROUNDS) if name in SLOW_ALGORITHMS else rounds


def quick_optimizer(name: str, domain, horizon: int | None = None, seed=0, **params):
    """``make_optimizer(name, ...)`` with :data:`QUICK_PARAMS` (``params`` override them); a test
    over every registered algorithm is skipped for one whose extra is not installed."""
    import pytest

    from vhct.extras import MissingExtraError
    from vhct.optimizers.registry import make_optimizer

    try:
        return make_optimizer(name, domain, horizon, seed=seed, **(QUICK_PARAMS.get(name, {}) | params))
    except MissingExtraError as exc:
        pytest.skip(f"{name}: {exc}")


def made_up_plan(folder: Path, config: Path = CONFIG_DIR / "paper-local.yaml") -> Path:
    """A config in ``folder`` extending ``config`` (which declares an analysis plan) whose plan, written
    there, comes from made-up pilot data: no pilot comparisons, so every arm runs the claims' minimum of
    seeds after the pilot's (for what dry-runs a confirmatory config without its pilot's results)."""
    import os

    from vhct.pipeline.config import load
    from vhct.pipeline.config.loading import base_chain, merged_files
    from vhct.pipeline.config.plan import (
        PLAN_FORMAT,
        Pilot,
        Plan,
        caps_of,
        config_sha256,
        plan_text,
        resolved,
        samples_sha256,
        seed_table,
    )
    from vhct.pipeline.files import sha256

    folder.mkdir(parents=True, exist_ok=True)
    claims = CONFIG_DIR / "claims.yaml"
    source = resolved(merged_files([config])[0], base_chain([config]))
    pilot, _ = load([CONFIG_DIR / "config.yaml"])
    target, _ = load([config], plan=False)
    floor, plan_file = 20, folder / "plan.yaml"
    plan = Plan(
        format=PLAN_FORMAT,
        config=str(config),
        config_sha256=config_sha256(source),
        claims_file=os.path.relpath(claims.resolve(), folder.resolve()),
        claims_sha256=sha256(claims),
        commit=None,
        dirty=None,
        pilot=Pilot(
            config="config/config.yaml",
            results=str(folder / "no-pilot-results"),
            seeds={e: pilot.seeds(e) for e in pilot.experiments},
            samples_sha256=samples_sha256([]),
        ),
        floor=floor,
        start=min(min(target.seeds(e)) for e in target.experiments),  # the config's first confirmatory seed
        claims=[],
        seeds=seed_table(
            [],
            {e: list(x.settings) for e, x in target.experiments.items()},
            floor,
            caps_of(source["plan"]),
            {},
        ),
    )
    plan_file.write_text(plan_text(plan), encoding="utf-8")
    made = folder / config.name
    made.write_text(f"base: {config}\noutput: {config.stem}\nplan: {{file: plan.yaml}}\n", encoding="utf-8")
    return made


def runs_from_finals(finals, horizon: int, power: float = 1.0) -> list:
    """Audit runs (against f* = 0), one per (seed, final cumulative regret) of ``finals`` (a mapping or a
    sequence, whose positions are the seeds), whose regret grows like final * (t / horizon) ** power."""
    import pandas as pd

    from vhct.reporting.audit.runs import Run

    items = finals.items() if hasattr(finals, "items") else enumerate(finals)
    t = np.arange(1, horizon + 1)
    runs = []
    for seed, final in items:
        cumulative = final * (t / horizon) ** power
        table = pd.DataFrame(
            {
                "t": t,
                "value": -np.diff(cumulative, prepend=0.0),
                "cumulative_regret": cumulative,
                "depth": np.full(horizon, 3.0),
                "step_seconds": np.full(horizon, 1e-3),
                "optimizer_seconds": np.full(horizon, 2.5e-4),
            }
        )
        runs.append(Run(seed, table, 0.0))
    return runs


def reseal(folder: Path) -> None:
    """Record every file of a published folder (``docs/findings``) in its provenance record, as the
    recorder does for the outputs its run made: a test that edits a finding on purpose makes it the
    record's, so the one reader serves it (a test of the check itself leaves the record as it was)."""
    path = folder / "provenance.json"
    prov = json.loads(path.read_text(encoding="utf-8"))
    files = [p for p in folder.rglob("*") if p.is_file() and p != path]
    prov["output_sha256"]["results"] = {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)
    }
    path.write_text(json.dumps(prov, indent=2), encoding="utf-8")


def made_up_provenance(**fields):
    """A provenance record of a made-up run (the typed record the findings render), ``fields`` changed."""
    from vhct.pipeline.provenance import Provenance

    record = {
        "run_id": "r",
        "command": "c",
        "config_files": [],
        "config_sha256": {},
        "figures": [],
        "commit": "0" * 40,
        "uncommitted_changes": False,
        "started_utc": "2026-01-01T00:00:00+00:00",
        "finished_utc": "2026-01-01T00:00:01+00:00",
        "wall_seconds": 1.0,
        "machine": {"host": "h", "cpus": 1, "cpu_model": "m", "system": "s", "python": "3"},
        "versions": {},
        "max_rss_mb": None,
        "output_sha256": {"results": {}, "figures": {}},
    }
    return Provenance.model_validate({**record, **fields})


#: the words of a made-up claim's quote that state the size its thresholds read
MADE_UP_SIZE = "by a made-up size"


def with_effect(data: dict) -> dict:
    """A made-up claim's keys with an effect of interest inside its claimed region (the claims file
    states one per claim): a band's middle, else 10 % (a ratio) or 0.1 (a difference) past the margin;
    and, where its thresholds are a margin, words of its quote that state that size (``size``)."""
    from types import SimpleNamespace

    from vhct.reporting.audit.claims_model import CLAIM_KINDS, Thresholds

    if "kind" not in data or "thresholds" not in data or data["kind"] not in CLAIM_KINDS:
        return data
    kind = CLAIM_KINDS[data["kind"]]()
    thresholds = Thresholds.model_validate(data["thresholds"])
    shaped = SimpleNamespace(thresholds=thresholds, direction=data.get("direction"))
    if "size" not in data and not kind.at_no_difference(shaped):
        data = {**data, "quote": f"{data.get('quote', '')} {MADE_UP_SIZE}", "size": MADE_UP_SIZE}
    if "effect_of_interest" in data:
        return data
    claimed, _ = kind.regions(shaped)
    low = max((r.factor for r in claimed if r.alternative == "greater"), default=None)
    high = min((r.factor for r in claimed if r.alternative == "less"), default=None)
    if low is not None and high is not None:
        value = (low + high) / 2.0
    elif high is not None:
        value = high - 0.1 if kind.additive else high * 0.9
    else:
        value = low + 0.1 if kind.additive else low * 1.1
    return {**data, "effect_of_interest": {"value": value, "reason": "made up"}}
