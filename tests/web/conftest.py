from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.web.live_support import close_opened


@pytest.fixture(autouse=True)
def _close_live_clients() -> Iterator[None]:
    yield
    close_opened()
