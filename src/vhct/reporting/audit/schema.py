"""The JSON schemas of the claims and questions files for editors and readers (validation is the
models'), generated from the models by ``python -m vhct.reporting.audit.schema``; a test checks them."""

from __future__ import annotations

from typing import Any

import yaml

from vhct.reporting.audit.claims_model import ClaimsFile, Record
from vhct.reporting.audit.questions_model import BeyondFile
from vhct.resources import BEYOND_SCHEMA, CLAIMS_SCHEMA, resource_path

#: each schema file and the model it is generated from
SCHEMAS: dict[str, type[Record]] = {CLAIMS_SCHEMA: ClaimsFile, BEYOND_SCHEMA: BeyondFile}


def json_schema(model: type[Record]) -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a file read by ``model``."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **model.model_json_schema()}


def schema_text(name: str) -> str:
    """The text of the schema file ``name`` (a key of :data:`SCHEMAS`)."""
    model = SCHEMAS[name]
    header = (
        f"# JSON schema of {name.replace('.schema', '')} (config/{name.replace('.schema', '')}), GENERATED "
        f"from the model\n# {model.__module__}.{model.__name__} by "
        "`python -m vhct.reporting.audit.schema`: do not edit.\n"
    )
    return header + yaml.safe_dump(json_schema(model), sort_keys=False, width=100, allow_unicode=True)


if __name__ == "__main__":
    for name in SCHEMAS:
        resource_path(name).write_text(schema_text(name), encoding="utf-8")
        print(f"wrote {resource_path(name)}")
