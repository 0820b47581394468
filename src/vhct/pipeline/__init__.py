"""The replication pipeline: config, data files, runs, run tables, aggregation, job entry points.

Imports the optimizers and objectives, never the reporting layer (``vhct[pipeline]``).
"""

from vhct.extras import require

require(("pandas", "yaml", "jsonschema"), "pipeline", "the pipeline (vhct.pipeline)")
