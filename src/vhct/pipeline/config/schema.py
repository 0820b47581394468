"""The config's JSON schema, generated from the model: ``src/vhct/resources/config.schema.yaml``.

    python -m vhct.pipeline.config --schema    # rewrite the file after changing the model

The file is for editors and readers (validation is the model's); a test checks it is up to date.
Names that registries declare (algorithms, objectives, figure kinds) are plain strings in it: the
model checks them against the registries, so registering one needs no schema change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from vhct.resources import CONFIG_SCHEMA, resource_path

#: the schema shipped with the package
SCHEMA_PATH = resource_path(CONFIG_SCHEMA)
HEADER = (
    "# JSON schema of the pipeline configuration (config/*.yaml), GENERATED from the model\n"
    "# vhct.pipeline.config.model.Config by `python -m vhct.pipeline.config --schema`: do not edit.\n"
)


def json_schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a config file, from the model."""
    from vhct.pipeline.config.model import Config

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **Config.model_json_schema()}
    schema["description"] = "VHCT replication pipeline configuration"
    schema["patternProperties"] = {"^x-": {"description": "free keys for YAML anchors"}}
    return schema


def schema_text() -> str:
    """The schema file's text."""
    return HEADER + yaml.safe_dump(json_schema(), sort_keys=False, width=100, allow_unicode=True)


def write_schema(path: Path | str = SCHEMA_PATH) -> Path:
    """Write the schema file (``--schema``)."""
    Path(path).write_text(schema_text(), encoding="utf-8")
    return Path(path)
