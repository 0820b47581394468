"""Reporting on the pipeline's results: figures, statistics, the audit of the paper's claims.

Imports every lower layer (optimizers, objectives, pipeline); nothing imports it back.
"""

from vhct.extras import require

require(("pandas", "scipy"), "pipeline", "the reporting (vhct.reporting)")
