"""A figure kind is declared in one place (vhct.pipeline.figure_kinds): the config accepts it, checks
its panels' keys, and plans its inputs from the declaration alone."""

from __future__ import annotations

import copy

import pytest
import yaml
from support import TINY

from vhct.pipeline import config as vc
from vhct.pipeline.figure_kinds import FigureKind, figure_kind, register, unregister


@pytest.fixture
def tiny() -> dict:
    return yaml.safe_load(TINY.read_text(encoding="utf-8"))


@pytest.fixture
def heatmap():
    kind = register(
        FigureKind(
            "heatmap",
            "a test kind",
            True,
            frozenset({"experiment"}),
            frozenset({"experiment", "settings"}),
        )
    )
    yield kind
    unregister(kind.name)


def test_registering_a_kind_makes_the_config_accept_it(tiny, heatmap):
    tiny["figures"]["heat"] = {"kind": "heatmap", "panels": [{"experiment": "garland", "settings": ["POO"]}]}
    cfg = vc.validate_config(copy.deepcopy(tiny))
    assert cfg.figure_settings("heat") == {"garland": ["POO"]}  # aggregates: True in the declaration
    assert cfg.figure_spec("heat").experiments["garland"].settings["POO"].algorithm == "POO"
    # its panels must give what it requires, and nothing it does not allow
    tiny["figures"]["heat"]["panels"] = [{"settings": ["POO"]}]
    with pytest.raises(
        vc.ConfigError, match="figures/heat/panels/0: a heatmap panel needs the key 'experiment'"
    ):
        vc.validate_config(copy.deepcopy(tiny))
    tiny["figures"]["heat"]["panels"] = [{"experiment": "garland", "round": 3}]
    with pytest.raises(vc.ConfigError, match="figures/heat/panels/0/round: a heatmap panel does not take it"):
        vc.validate_config(copy.deepcopy(tiny))


def test_an_unregistered_kind_is_refused_listing_the_known_ones(tiny):
    tiny["figures"]["heat"] = {"kind": "heatmap", "panels": [{"experiment": "garland"}]}
    with pytest.raises(vc.ConfigError, match="figures/heat/kind: unknown figure kind 'heatmap'") as info:
        vc.validate_config(tiny)
    assert "regret, average_regret" in str(info.value)


def test_a_kind_is_declared_once():
    with pytest.raises(ValueError, match="already registered"):
        register(figure_kind("regret"))
    with pytest.raises(ValueError, match="bad panel keys"):
        FigureKind("x", "", False, frozenset({"nope"}), frozenset({"nope"}))
