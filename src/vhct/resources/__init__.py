"""Files shipped inside the package: the config and claims schemas and the default claims file.

Found through the package itself (``importlib.resources``), so a wheel install finds them as
well as an editable install of a checkout (``config/claims.yaml`` in a checkout links here).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

CONFIG_SCHEMA = "config.schema.yaml"
CLAIMS_SCHEMA = "claims.schema.yaml"
CLAIMS = "claims.yaml"
BEYOND = "beyond.yaml"
BEYOND_SCHEMA = "beyond.schema.yaml"


def resource_path(name: str) -> Path:
    """Filesystem path of the shipped file ``name`` (the package is installed unzipped)."""
    path = Path(str(files(__name__).joinpath(name)))
    if not path.is_file():
        raise FileNotFoundError(f"vhct resource {name!r} is missing from the installed package ({path})")
    return path
