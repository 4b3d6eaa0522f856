"""A player's data as a file to keep (app/web/download.py)."""

from __future__ import annotations

import json

from app.web.download import json_download


def test_the_export_is_readable_json_sent_as_an_attachment_never_cached() -> None:
    data = {"player": {"name": "Zoë"}, "games": [{"id": "g1", "moves": 3}]}
    response = json_download(data)
    assert json.loads(bytes(response.body)) == data
    assert "Zoë".encode() in response.body  # written as UTF-8, not \u escapes
    assert response.media_type == "application/json"
    assert response.headers["content-disposition"].startswith("attachment;")
    assert 'filename="patience-hall-my-data.json"' in response.headers["content-disposition"]
    assert response.headers["cache-control"] == "no-store"
