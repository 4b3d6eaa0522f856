"""The JSON API's answers as Pydantic models, and the mapping from the services' values to them.

Every JSON route declares one of these as its ``response_model`` (and its refusals through
:func:`errors_of`), so ``/openapi.json`` and ``/docs`` show every shape a client gets. The
services return dataclasses; only this module knows what the API calls their fields.

Speed: a game state is the answer of every move, so it is built as plain data (a dict shaped as
:class:`GameState`) and written by pydantic-core's ``to_json``: 21 µs a state against 31 µs for
the services' old ``to_json()`` and ``json.dumps``, where building the models would cost 50 µs
validated or 110 µs with ``model_construct`` (bench/state_json.py, bench/RESULTS.md "API
schema"). The route returns those bytes, so FastAPI neither validates nor encodes them again;
that the data matches the model is the tests' job (every state the test clients receive is
validated against it, tests/web/answers.py, and Schemathesis checks every answer against the
schema). The other answers are rarer and are built as validated models.

One module per kind of answer: base (shared pieces and refusals), game_state (moves, hints,
analysis, replays), records (leaderboards, players, deals), rooms, competition.
"""
