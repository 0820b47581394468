"""Audit of the paper's empirical claims against the pipeline's runs.

Claims and questions are data (``config/claims.yaml``, ``config/beyond.yaml``), typed by
``claims_model`` and ``questions_model`` and read by ``claims``; ``kinds`` says what each kind of
claim means, built from the comparisons of ``checks`` on the per-seed statistics of ``runs``;
``verdicts`` decides and combines, ``evaluate`` and ``beyond`` evaluate claims and questions,
``records`` holds the typed records and their one JSON writer and reader, ``job`` is the pipeline's
stage. Verdicts: reproduced, not reproduced, inconclusive (too few seeds, or no test significant),
not evaluated (the config does not run what the claim needs).
"""
