"""The optimizers: the OSC tree search (VHCT, HCT), T-HOO, POO, PCT and the BO baseline.

This layer needs numpy only (the BO baseline imports GPyOpt when it is built, ``vhct[bo]``).
"""
