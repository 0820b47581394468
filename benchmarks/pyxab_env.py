"""The authors' library PyXAB in a throwaway virtual environment, for the benchmarks that run it beside ours.

PyXAB comes from the package registry (pip) into a venv under a temporary directory that the
caller owns, so nothing of it enters this project's environment; a benchmark runs it by starting
that venv's ``python`` on a driver script of its own.
"""

from __future__ import annotations

import subprocess
import sys
import venv
from pathlib import Path

#: the release the paper's authors published and that the benchmarks compare against
PYXAB_VERSION = "0.3.0"
#: how much of pip's error output to show when the installation fails
PIP_ERROR_CHARS = 400


def pyxab_python(workdir: Path, version: str = PYXAB_VERSION) -> Path | None:
    """Create a venv in ``workdir`` with PyXAB ``version``: its python, or None (with a message) on failure.

    The message (one line) goes to stderr, so a benchmark can go on without the PyXAB rows.
    """
    env_dir = workdir / "pyxab-venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    cmd = [str(python), "-m", "pip", "install", "-q", f"PyXAB=={version}", "numpy"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        message = " ".join(result.stderr.split())[-PIP_ERROR_CHARS:]  # one line, pip's last words
        print(f"PyXAB skipped: pip install PyXAB=={version} failed: {message}", file=sys.stderr)
        return None
    return python
