"""Schemathesis hooks for tests/web/test_schema.py (loaded through SCHEMATHESIS_HOOKS).

One hook, and why: JSON Schema counts ``1.0`` as an integer, so Schemathesis sometimes sends
``{"count": 138.0}`` as a schema-valid request; the API refuses floats for its integer fields
by contract (tests/web/api/test_games.py: ``count: 1.0`` and ``version: 0.0`` are malformed)
and no JSON Schema can tell 1.0 from 1. So a whole number generated as a float is sent as the
integer it is; nothing else about the request changes.
"""

from __future__ import annotations

from typing import Any

import schemathesis


def _whole_numbers_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole_numbers_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers_as_ints(v) for v in value]
    return value


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: dict[str, Any]) -> None:
    if isinstance(case.body, dict | list | float):
        case.body = _whole_numbers_as_ints(case.body)
