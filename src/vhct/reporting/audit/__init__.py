"""Audit of the paper's empirical claims against the pipeline's runs.

The claims are data (``config/claims.yaml``, schema ``vhct/resources/claims.schema.yaml``): each
names its experiments and settings, a statistic read per run (per seed), a kind of claim, a level
and effect-size thresholds. One module per job:

- ``claims_model``: the claims and questions files as typed records, and the registry of claim
  kinds (``CLAIM_KINDS``); ``claims``: reading them, errors naming the file and key;
- ``kinds``: what each kind of claim means (one class per kind); ``checks``: the comparisons and
  tests the kinds are made of; ``runs``: the runs a claim reads and their per-seed statistics;
- ``verdicts``: the verdict ladder and how verdicts combine; ``evaluate``: claims per experiment
  and combined, under the defaults and each variant; ``beyond``: the questions beyond the paper;
- ``records``: the typed records and their one JSON writer and reader (rendered by
  ``vhct.reporting.render``); ``job``: the pipeline's audit stage.

Verdicts: reproduced, not reproduced, inconclusive (too few seeds, or neither the claimed nor the
refuting test significant) and not evaluated (the config does not run what the claim needs).
"""
