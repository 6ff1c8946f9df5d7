"""The generated contract: the committed OpenAPI document is the app's, and it describes the answers whole."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from poolscope.api.contract import OPENAPI_PATH, openapi_document, render, responses_complete
from poolscope.config import Settings
from poolscope.main import create_app
from poolscope.schemas import MetricsOut, TargetInfo, TargetState

REPO = Path(__file__).resolve().parents[3]


def test_the_committed_openapi_document_is_what_the_app_produces():
    committed = (REPO / OPENAPI_PATH).read_text(encoding="utf-8")
    assert committed == render(openapi_document()), (
        f"{OPENAPI_PATH} is out of date: run `make contract` and commit the result"
    )


def test_the_document_is_the_same_for_any_settings():
    # Targets, users and limits shape answers, never their types: the UI's types must not depend on them.
    settings = Settings(
        targets=[{"name": "db1", "dsn": "mysql://mon:pw@127.0.0.1:3306/"}],
        poll_interval_s=5,
        anonymous_read=True,
    )
    assert create_app(settings, start_poller=False).openapi() == openapi_document()


async def test_the_served_document_is_the_committed_one():
    app = create_app(Settings.model_construct(), start_poller=False)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        served = (await client.get("/api/openapi.json")).json()
    assert served == json.loads((REPO / OPENAPI_PATH).read_text(encoding="utf-8"))


def test_every_schema_and_every_field_of_the_document_is_described():
    # The reference a client reads is the document: a field without a description is a field
    # whose unit and meaning only the code knows (give it a docstring: poolscope/schemas/base.py).
    undescribed = [
        f"{name}.{field}" if field else name
        for name, schema in openapi_document()["components"]["schemas"].items()
        for field in ["", *schema.get("properties", {})]
        if not (schema["properties"][field] if field else schema).get("description", "").strip()
    ]
    assert undescribed == []


def test_an_answer_lists_every_key_it_carries_as_required():
    schemas = openapi_document()["components"]["schemas"]
    answers = {
        "TargetInfo": TargetInfo(name="db1", poll_interval_s=1.0),
        "TargetState": TargetState(target="db1", ts=1.0, status="up"),
        "MetricsOut": MetricsOut(from_=0.0, to=1.0, step_s=1.0, resolution="raw", series=[]),
    }
    for name, model in answers.items():
        # As FastAPI serializes a response_model: by alias, nothing left out.
        assert set(schemas[name]["required"]) == set(model.model_dump(mode="json", by_alias=True)), name


def test_a_request_body_keeps_its_optional_fields():
    silence_in = openapi_document()["components"]["schemas"]["SilenceIn"]
    assert "comment" in silence_in["properties"]
    assert "comment" not in silence_in["required"]


def test_responses_complete_marks_only_models_reachable_from_a_success():
    document = {
        "paths": {
            "/a": {
                "get": {
                    "responses": {
                        "200": {
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Out"}}}
                        },
                        "422": {
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Err"}}}
                        },
                    }
                },
                "post": {
                    "requestBody": {
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/In"}}}
                    },
                    "responses": {
                        "200": {
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/In"}}}
                        }
                    },
                },
            }
        },
        "components": {
            "schemas": {
                "Out": {
                    "properties": {"a": {}, "inner": {"$ref": "#/components/schemas/Inner"}},
                    "required": [],
                },
                "Inner": {"properties": {"b": {}, "c": {}}, "required": ["c"]},
                "Err": {"properties": {"d": {}}, "required": []},
                "In": {"properties": {"e": {}}, "required": []},
            }
        },
    }
    schemas = responses_complete(document)["components"]["schemas"]
    assert schemas["Out"]["required"] == ["a", "inner"]
    assert schemas["Inner"]["required"] == ["b", "c"]
    assert schemas["Err"]["required"] == []  # an error answer is not one of our models
    assert schemas["In"]["required"] == []  # also a request body: defaults stay optional
    assert responses_complete(document) == document  # idempotent
