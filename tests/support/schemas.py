"""The JSON Schemas of a response template and of a templates/ file, as validators."""

import json
from pathlib import Path

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

from engine.template_files import TEMPLATES_DIR

TEMPLATE_SCHEMA_PATH = TEMPLATES_DIR / "response_template.schema.json"
FILE_SCHEMA_PATH = TEMPLATES_DIR / "template_file.schema.json"
TEMPLATE_FILES = sorted(
    p for p in TEMPLATES_DIR.glob("*.json") if not p.name.endswith(".schema.json")
)


def read_schema(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _registry() -> referencing.Registry:
    return referencing.Registry().with_resource(
        "response_template.schema.json",
        DRAFT202012.create_resource(read_schema(TEMPLATE_SCHEMA_PATH)),
    )


TEMPLATE_VALIDATOR = jsonschema.Draft202012Validator(
    read_schema(TEMPLATE_SCHEMA_PATH), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
FILE_VALIDATOR = jsonschema.Draft202012Validator(
    read_schema(FILE_SCHEMA_PATH),
    registry=_registry(),
    format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
)
