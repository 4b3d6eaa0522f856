"""``python -m app.jobs`` (app/jobs/__main__.py): running the package starts one solver worker
through ``app.jobs.main``, where the job app is defined (never in ``__main__``)."""

from __future__ import annotations

import runpy

import pytest

import app.jobs


def test_running_the_package_calls_its_main_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(app.jobs, "main", lambda *args: calls.append(args))
    runpy.run_module("app.jobs", run_name="__main__")
    assert calls == [()]  # its arguments are read from sys.argv by main itself
