"""The API contract: the app's OpenAPI document, complete for the UI and rendered the same way every time.

`make contract` writes it to frontend/src/api/openapi.json (scripts/gen-openapi.py) and generates
the UI's types from it (frontend/src/api/schema.gen.ts); tests/api/test_contract.py fails when the
committed file drifts from the app.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI

# Where the committed document lives, relative to the repository root.
OPENAPI_PATH = Path("frontend") / "src" / "api" / "openapi.json"
REF_PREFIX = "#/components/schemas/"


def install(app: FastAPI) -> None:
    """Make the app's own document (/api/openapi.json, /api/docs) the complete one below."""
    build: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        return responses_complete(errors_described(build()))

    app.openapi = openapi  # type: ignore[method-assign]


def responses_complete(document: dict[str, Any]) -> dict[str, Any]:
    """Mark every field of a response-only model required (in place; idempotent).

    Pydantic leaves a field with a default out of `required`, which is right for a request body
    but not for an answer: every model is serialized whole (no route excludes unset or None
    fields), so each key is always there. Without this the generated types would make the UI
    check for keys that are never missing. Models that also appear in a request keep pydantic's
    list.
    """
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    answers: list[Any] = []
    requests: list[Any] = []
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            requests.append(operation.get("requestBody"))
            requests.append(operation.get("parameters"))
            for status, response in operation.get("responses", {}).items():
                if status.startswith("2"):
                    answers.append(response)
    inputs = _reachable(requests, schemas)
    for name in sorted(_reachable(answers, schemas) - inputs):
        schema = schemas[name]
        if "properties" in schema:
            schema["required"] = list(schema["properties"])
    return document


# FastAPI's own 422 shapes: not our models, so their descriptions are given here (every field of
# the contract has one: tests/api/test_contract.py).
FASTAPI_ERRORS: dict[str, tuple[str, dict[str, str]]] = {
    "HTTPValidationError": (
        "A request whose input did not validate (422).",
        {"detail": "One entry per problem."},
    ),
    "ValidationError": (
        "One problem with a request's input.",
        {
            "loc": (
                "Where: the part of the request (body, query, path), then the field's path in it"
                " (a name the request made up shows as *)."
            ),
            "msg": "What is wrong, for people.",
            "type": "The kind of problem, e.g. missing or string_too_long.",
        },
    ),
}


def errors_described(document: dict[str, Any]) -> dict[str, Any]:
    """Describe FastAPI's validation error shapes in the document as api/errors.py answers them:
    no `input` or `ctx`, which would echo what was sent (in place; idempotent)."""
    schemas: dict[str, Any] = document.get("components", {}).get("schemas", {})
    for name, (description, fields) in FASTAPI_ERRORS.items():
        schema = schemas.get(name)
        if schema is None:
            continue
        schema["description"] = description
        properties = schema.get("properties", {})
        for field in [f for f in properties if f not in fields]:
            del properties[field]
        for field, text in fields.items():
            if field in properties:
                properties[field]["description"] = text
    return document


def _reachable(roots: list[Any], schemas: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = list(_refs(roots))
    while todo:
        name = todo.pop()
        if name not in seen and name in schemas:
            seen.add(name)
            todo.extend(_refs(schemas[name]))
    return seen


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            yield ref.removeprefix(REF_PREFIX)
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of an app built from default settings; nothing is started or read."""
    from poolscope.config import Settings
    from poolscope.main import create_app  # main imports this module

    # No config file, no environment: the routes and their models do not depend on settings.
    return create_app(Settings.model_construct(), start_poller=False).openapi()


def render(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, two-space indent, one trailing newline (a diff shows real changes)."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
