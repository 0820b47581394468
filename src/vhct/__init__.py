"""Hierarchical-bandit black-box optimizers of the OSC framework (VHCT, HCT, T-HOO, POO, PCT).

Reference replication of Li, Wang, Cheng and Song, "Optimum-statistical Collaboration
Towards General and Efficient Black-box Optimization" (TMLR 2023). All optimizers
maximize and share ``ask() / tell(point, reward) / recommend()``; ``maximize`` and
``minimize`` run one in a single call and return a :class:`Result` that reads like
``scipy.optimize.OptimizeResult``. ``import vhct`` and those calls need numpy alone.
"""

from .api import Result, maximize, minimize
from .optimizers.base import Optimizer
from .optimizers.hoo import TruncatedHOO
from .optimizers.parallel import PCT, POO
from .optimizers.registry import algorithm_names, make_optimizer
from .optimizers.tree import HCT, OSC, VHCT

__version__ = "0.1.0"

__all__ = [
    "HCT",
    "OSC",
    "PCT",
    "POO",
    "VHCT",
    "Optimizer",
    "Result",
    "TruncatedHOO",
    "algorithm_names",
    "make_optimizer",
    "maximize",
    "minimize",
]
