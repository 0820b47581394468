"""Audit of the paper's empirical claims (``config/claims.yaml``) against the pipeline's runs; its
modules are listed in docs/layout.md, its rules in docs/audit.md. Verdicts: reproduced, not
reproduced, inconclusive (too few seeds, or no test significant), not evaluated (the config does not
run what the claim needs).
"""
