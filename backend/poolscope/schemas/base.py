"""The base of every API shape: a field's docstring (the string under it) is its description in
the OpenAPI document, so the reference a client reads is written beside the field."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Schema(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
