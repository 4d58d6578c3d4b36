"""Structural OpenAPI v3 schemas (what a CRD's `openAPIV3Schema` must be) from pydantic models: the framework's
(`ballast.runtime.crd.schema`), re-exported for the kinds of `ballast.api`."""

from __future__ import annotations

from ballast.runtime.crd.schema import Schema, StructuralSchemaError, check_structural, openapi_schema

__all__ = ["Schema", "StructuralSchemaError", "check_structural", "openapi_schema"]
