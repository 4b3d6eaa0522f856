"""A JSON document as a file to keep (a player's data export, from the API or the account page)."""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import Response


def json_download(data: dict[str, Any]) -> Response:
    return Response(
        json.dumps(data, indent=1, ensure_ascii=False),
        media_type="application/json",
        headers={
            "content-disposition": 'attachment; filename="patience-hall-my-data.json"',
            "cache-control": "no-store",
        },
    )
