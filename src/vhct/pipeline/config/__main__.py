"""``python -m vhct.pipeline.config FILE...``: the command line (:mod:`vhct.pipeline.config.cli`)."""

import sys

from vhct.pipeline.config.cli import main

sys.exit(main())
