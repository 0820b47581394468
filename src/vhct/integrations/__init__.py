"""Bridges to other tools: ``vhct.integrations.optuna`` (VHCT as an Optuna sampler, extra ``optuna``).

Nothing is imported here, so ``import vhct`` never loads a bridge's dependencies.
"""
