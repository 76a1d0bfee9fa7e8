"""The contract JSON Schema, generated from the models and committed for editors.

Regenerate with: slakit schema -o slaschema/contract.schema.json
"""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("contract.schema.json")
REGENERATE = "slakit schema -o slaschema/contract.schema.json"


def contract_schema() -> dict:
    from slaschema.models import Contract

    schema = Contract.model_json_schema(mode="validation", by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://slakit.dev/schema/contract-v1.json"
    schema["title"] = "slakit contract (format v1)"
    return schema


def schema_text() -> str:
    return json.dumps(contract_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
