"""The Stats API described as OpenAPI 3.1 (served at ``/api/v2/openapi.json``), made
from the same names the checks use, so the two cannot drift."""

from __future__ import annotations

from ..reads.stats_query import COUNTED, CUSTOM, LOGICAL, METRICS, OPERATORS, TIMES, VISIT_PAGES
from .dates import PRESETS
from .parse import INCLUDE, MAX_LIMIT

DIMENSIONS = ["time", *TIMES, *COUNTED, *VISIT_PAGES, *CUSTOM, "event:props:NAME"]


def spec(version: str = "2") -> dict:
    filter_ref = {"$ref": "#/components/schemas/Filter"}
    query = {
        "type": "object", "required": ["site_id", "metrics", "date_range"],
        "additionalProperties": False,
        "properties": {
            "site_id": {"type": "string", "description": "a site's name"},
            "metrics": {"type": "array", "minItems": 1,
                        "items": {"type": "string", "enum": list(METRICS)}},
            "date_range": {"oneOf": [
                {"type": "string", "enum": list(PRESETS)},
                {"type": "array", "minItems": 2, "maxItems": 2,
                 "items": {"type": "string"},
                 "description": "[start, end]: dates (both inclusive) or date-times "
                                "with offsets, in the site's zone"}]},
            "dimensions": {"type": "array", "maxItems": 3,
                           "items": {"type": "string", "examples": DIMENSIONS}},
            "filters": {"type": "array", "items": filter_ref},
            "order_by": {"type": "array", "items": {
                "type": "array", "prefixItems": [{"type": "string"},
                                                 {"enum": ["asc", "desc"]}]}},
            "pagination": {"type": "object", "properties": {
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
                "offset": {"type": "integer", "minimum": 0}}},
            "include": {"type": "object", "additionalProperties": False, "properties": {
                name: {"type": "boolean", "default": default}
                for name, default in INCLUDE.items()}},
        },
    }
    filter_schema = {"type": "array", "description":
                     f"[operator, dimension, [values]] (operators: {', '.join(OPERATORS)}; "
                     f"dimensions: {', '.join((*COUNTED, *VISIT_PAGES))}), "
                     f"or [\"and\"|\"or\", [filters]], "
                     f"or [\"not\", filter] ({', '.join(LOGICAL)})"}
    answer = {"type": "object", "properties": {
        "results": {"type": "array", "items": {"type": "object", "properties": {
            "dimensions": {"type": "array"}, "metrics": {"type": "array"}}}},
        "meta": {"type": "object"}, "query": {"type": "object"}}}
    error = {"type": "object", "properties": {"error": {"type": "string"}}}

    def response(description: str, schema: dict) -> dict:
        return {"description": description,
                "content": {"application/json": {"schema": schema}}}

    return {
        "openapi": "3.1.0",
        "info": {"title": "hitboard Stats API", "version": version,
                 "description": "Plausible's Stats API v2 shape for what hitboard counts."},
        "paths": {"/api/v2/query": {"post": {
            "summary": "Metrics of a site over a range, by a dimension, under filters",
            "security": [{"bearer": []}],
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Query"}}}},
            "responses": {
                "200": response("the answer", answer),
                "400": response("the question names something unknown or not counted",
                                error),
                "401": response("no credential, or a wrong one", error),
                "403": response("a site the key may not read", error),
                "413": response("body too large", error),
                "415": response("not JSON", error),
                "429": response("too many requests (Retry-After says when)", error)}}}},
        "components": {
            "schemas": {"Query": query, "Filter": filter_schema},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "an API key (hbk_...) or the "
                                                          "admin secret"}}},
    }
