"""``python -m vhct.pipeline.config FILE...``: check config files as the pipeline would, before Snakemake.

Snakemake parses ``--configfile`` itself, before the workflow's own checks run, and reports a YAML
syntax error or an empty file without its name; this check names the file, the line and the key.
``--schema`` rewrites the JSON schema generated from the model. ``--folder figures`` prints only the
config's folder there (``figures/paper-local``), for commands that name a config's outputs (make);
neither it nor ``--without-plan`` (a config validated with its own seeds) reads a config's analysis plan.
A full check also refuses a config whose results folder another config owns and would write
differently (``vhct.pipeline.config.owner``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from vhct.pipeline.config.errors import ConfigError
from vhct.pipeline.config.loading import load
from vhct.pipeline.config.owner import OWNER_ROOT, check_owner
from vhct.pipeline.config.schema import write_schema
from vhct.pipeline.layout import OUTPUT_ROOTS


def main(argv: Sequence[str] | None = None) -> int:
    """Check config files (in ``--configfile`` order); 0 when valid, 1 with one line on stderr if not."""
    parser = argparse.ArgumentParser(
        prog="python -m vhct.pipeline.config", description=__doc__.splitlines()[0]
    )
    parser.add_argument("files", nargs="*", type=Path, help="config files, in --configfile order")
    parser.add_argument("--schema", action="store_true", help="rewrite the JSON schema from the model")
    parser.add_argument(
        "--folder", choices=OUTPUT_ROOTS, help="print only the config's folder of these outputs"
    )
    parser.add_argument(
        "--without-plan",
        action="store_true",
        help="validate a config declaring an analysis plan with its own seeds, the plan unread (no run)",
    )
    args = parser.parse_args(argv)
    if args.schema:
        print(f"wrote {write_schema()}")
        if not args.files:
            return 0
    if not args.files:
        parser.error("give config files (or --schema)")
    try:
        # printing a folder or validating without the plan starts no run: the plan is not read
        cfg, paths = load(args.files, plan=not (args.folder or args.without_plan))
        if not (args.folder or args.without_plan):  # a run would write the folder: is it this config's?
            check_owner(cfg.folder(OWNER_ROOT), paths, cfg.source)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.folder:
        print(cfg.folder(args.folder))
        return 0
    names = ", ".join(map(str, args.files))
    unchecked = ""
    if args.without_plan:
        unchecked = " with its own seed counts after the pilot's, its analysis plan unread (--without-plan)"
    print(f"{names}: valid{unchecked} ({len(cfg.experiments)} experiments, {len(cfg.run_jobs())} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
