"""``python -m vhct.article --findings docs/findings --out docs/article.pdf`` (``make article``), or
``--results results/paper-local`` for a finished run's results folder. A bad input is one line
naming the file (exit 2); nothing is written then."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from vhct.article.build import build
from vhct.article.sources import command

DEFAULT_FINDINGS = Path("docs") / "findings"
DEFAULT_OUT = Path("docs") / "article.pdf"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vhct.article", description=__doc__.splitlines()[0])
    given = parser.add_mutually_exclusive_group()
    given.add_argument(
        "--findings", type=Path, help=f"the shipped findings folder (default {DEFAULT_FINDINGS})"
    )
    given.add_argument(
        "--results", type=Path, help="a finished run's results folder, e.g. results/paper-local"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the PDF (default {DEFAULT_OUT})")
    parser.add_argument(
        "--checkout",
        type=Path,
        default=Path("."),
        help="the checkout whose CITATION.cff, config/ and docs/upstream/ it reads (default .)",
    )
    parser.add_argument("--typst", type=Path, help="also write the rendered Typst source here")
    args = parser.parse_args(argv)
    kind = "results" if args.results is not None else "findings"
    folder = args.results if args.results is not None else (args.findings or DEFAULT_FINDINGS)
    started = time.perf_counter()

    def write() -> str:
        build(folder, args.out, kind, args.checkout, args.typst)
        return f"wrote {args.out} from {folder} in {time.perf_counter() - started:.1f} s"

    return command(write)


if __name__ == "__main__":
    sys.exit(main())
