"""Rated races from the queue (contract v3, Competition), on SQLite and PostgreSQL: the server
pairs strangers only, rated races change ratings as openskill computes, a forfeit ranks below
every finisher, and every change is stored with its race."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db.models import QueuedRacer, RatingChange
from app.services import pool
from app.services.race_queue import compatible
from app.services.ratings import MODEL, Finisher, places
from app.services.recount import recount
from app.services.rooms.views import Limits
from tests.web.answers import check_answer
from tests.web.competition_support import GAME, ensure_fresh, solution_of
from tests.web.hidden import HiddenCardGuard
from tests.web.support import browser_post, error_code, move, new_player, post

PASSWORD = "correct horse battery staple"


@pytest.fixture()
def at_once(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    """No wait in the queue and no countdown: a race forms and starts at once."""
    monkeypatch.setattr(app.state.services.race_queue, "wait_s", 0.0)
    monkeypatch.setattr(app.state.services.rooms, "limits", Limits(countdown_s=0))
    with app.state.services.sessions.begin() as db:  # earlier tests' queue is not ours
        db.query(QueuedRacer).delete()


def client_at(app: FastAPI, guard: HiddenCardGuard, address: str) -> Iterator[TestClient]:
    with TestClient(app, base_url="http://testserver", client=(address, 50000)) as c:
        c.event_hooks["response"] += [guard.check, check_answer]
        yield c


@pytest.fixture()
def home(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    yield from client_at(app, guard, "198.51.100.7")


@pytest.fixture()
def away(app: FastAPI, guard: HiddenCardGuard) -> Iterator[TestClient]:
    yield from client_at(app, guard, "203.0.113.9")


def queue(client: TestClient, who: dict[str, str], game: str = GAME) -> dict[str, Any]:
    answer = client.post("/api/races/queue", json={"game": game}, headers=who)
    assert answer.status_code == 200, answer.text
    data: dict[str, Any] = answer.json()
    return data


def test_two_players_of_one_address_are_never_paired(
    app: FastAPI, home: TestClient, away: TestClient, at_once: None
) -> None:
    one, two = new_player(home), new_player(home)
    assert queue(home, one)["queued"] is True
    state = queue(home, two)
    assert state["queued"] is True and state["room"] is None and state["waiting"] == 2
    assert home.get("/api/races/queue", headers=one).json()["room"] is None
    stranger = new_player(away)
    formed = queue(away, stranger)
    assert formed["queued"] is False and formed["room"]["race"]["rated"] is True
    racers = {p["name"] for p in formed["room"]["players"]}
    assert len(racers) == 2  # the stranger and the first of the two, never both of them
    first = home.get("/api/races/queue", headers=one).json()
    assert first["room"]["code"] == formed["room"]["code"]
    assert home.get("/api/races/queue", headers=two).json()["room"] is None
    assert home.delete("/api/races/queue", headers=two).status_code == 204
    assert home.get("/api/races/queue", headers=two).json()["queued"] is False


def test_players_of_one_private_room_are_not_paired_for_a_day(
    app: FastAPI, home: TestClient, away: TestClient, at_once: None
) -> None:
    host, guest = new_player(home), new_player(away)
    code = home.post("/api/rooms", json={"game": GAME}, headers=host).json()["code"]
    assert away.post(f"/api/rooms/{code}/join", headers=guest).status_code == 200
    started = home.post(f"/api/rooms/{code}/start", headers=host)
    assert started.status_code == 200, started.text
    for who, client in ((host, home), (guest, away)):
        assert client.post(f"/api/rooms/{code}/leave", headers=who).status_code == 200
    # Members of one private room (now, or racers of its race in the last day) could have
    # arranged to meet in the queue: they wait for others.
    queue(home, host)
    assert queue(away, guest)["room"] is None


def test_the_same_session_or_address_is_never_compatible() -> None:
    def q(pid: str, address: str, session: str) -> QueuedRacer:
        return QueuedRacer(
            player_id=pid, game=GAME, address=address, session_key=session,
            joined_at=datetime.now(UTC),
        )  # fmt: skip

    a, b = q("a", "1.1.1.1", "browser:x"), q("b", "2.2.2.2", "browser:x")
    c = q("c", "3.3.3.3", "browser:y")
    assert not compatible(a, b, set()) and compatible(a, c, set())
    assert not compatible(a, q("d", "1.1.1.1", "browser:z"), set())
    assert not compatible(a, c, {frozenset(("a", "c"))})


def test_a_forfeit_ranks_below_every_finisher() -> None:
    at = datetime.now(UTC)
    racers = [
        Finisher("quitter", "lost", at, 40, 10, forfeit=True),
        Finisher("stuck", "lost", at, 3, 50, forfeit=False),
        Finisher("winner", "won", at, 52, 90, forfeit=False),
        Finisher("quitter2", "lost", at, 30, 10, forfeit=True),
    ]
    assert places(racers) == [3, 2, 1, 3]


@pytest.mark.slow
def test_a_rated_race_changes_ratings_as_openskill_computes(
    app: FastAPI,
    home: TestClient,
    away: TestClient,
    at_once: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ensure_fresh(app, 1)
    with app.state.services.sessions() as db:
        deal = pool.fresh_deals(db, GAME)[0][0]
    monkeypatch.setattr(app.state.services.games, "draw_deal", lambda: deal)
    win_name, lose_name = (f"r{secrets.token_hex(5)}" for _ in range(2))
    winner, quitter = new_player(home, win_name), new_player(away, lose_name)
    queue(home, winner)
    room = queue(away, quitter)["room"]
    assert room is not None and room["race"]["deal"] is None  # sealed while it runs
    games = room["race"]["games"]
    assert set(games) == {win_name, lose_name}
    me = home.get("/api/races/queue", headers=winner).json()
    assert me["room"]["code"] == room["code"]
    # The quitter resigns (a forfeit), the winner plays the solver's line.
    resigned = away.post(f"/api/games/{games[lose_name]}/resign", json={}, headers=quitter)
    assert resigned.status_code == 200, resigned.text
    version = 0
    for notation in solution_of(app, games[win_name]):
        answer = move(home, games[win_name], notation, version, winner)
        assert answer.status_code == 200, answer.text
        version = answer.json()["version"]
    finished = home.get(f"/api/rooms/{room['code']}").json()["race"]
    assert finished["status"] == "finished" and finished["deal"] == deal
    expected = MODEL.rate([[MODEL.rating()], [MODEL.rating()]], ranks=[1.0, 2.0])
    up = home.get(f"/api/players/{win_name}").json()["race_ratings"][GAME]
    down = home.get(f"/api/players/{lose_name}").json()["race_ratings"][GAME]
    assert up["races"] == down["races"] == 1
    assert up["mu"] == pytest.approx(expected[0][0].mu)
    assert up["sigma"] == pytest.approx(expected[0][0].sigma)
    assert down["mu"] == pytest.approx(expected[1][0].mu)
    assert up["rating"] == pytest.approx(up["mu"] - 3 * up["sigma"])
    page = home.get(f"/players/{win_name}")
    assert f'<td class="race-rating">{up["rating"]:.1f}</td>' in page.text
    # Each rating change is traced to its race on the player page: the race's row links its
    # room and says the rating before and after.
    for name, rating in ((win_name, up["rating"]), (lose_name, down["rating"])):
        rows = races_rows(home.get(f"/players/{name}").text)
        assert len(rows) == 1 and f'href="/rooms/{room["code"]}"' in rows[0]
        change = f"{0:.1f} → {rating:.1f} ({'+' if rating >= 0 else ''}{rating:.1f})"
        assert f'<td class="rating-change">{change}</td>' in rows[0], rows[0]
    room_page = home.get(f"/rooms/{room['code']}")
    assert 'id="race-ratings"' in room_page.text and f"{down['rating']:.1f}" in room_page.text
    with app.state.services.sessions() as db:
        changes = db.execute(
            select(RatingChange.place, RatingChange.forfeit, RatingChange.mu_after)
            .where(RatingChange.game == GAME)
            .order_by(RatingChange.place)
            .where(RatingChange.race_id == room_race_id(app, room["code"]))
        ).all()
    assert [(p, f) for p, f, _ in changes] == [(1, False), (2, True)]
    # The ratings follow from the stored games and move logs alone.
    report = recount(app.state.services)
    assert report.races >= 1 and report.problems == [], report.problems
    exported = home.get("/api/me/export", headers=winner).json()["ratings"][GAME]
    assert exported["races"] == 1 and exported["mu"] == pytest.approx(up["mu"])
    assert [c["race"] for c in exported["changes"]] == [room_race_id(app, room["code"])]
    board = home.get("/api/leaderboard", params={"game": GAME, "board": "races"}).json()
    ranked = [r["player"] for r in board["rows"]]
    assert ranked.index(win_name) < ranked.index(lose_name)
    refused = home.get("/api/leaderboard", params={"board": "races"})
    assert error_code(refused, 422) == "invalid_request"
    # A rated race's room is the server's: nobody joins it or starts a casual rematch in it.
    third = new_player(home)
    assert error_code(home.post(f"/api/rooms/{room['code']}/join", headers=third), 409)
    assert error_code(home.post(f"/api/rooms/{room['code']}/start", headers=winner), 409)


def races_rows(page: str) -> list[str]:
    table = page.split('id="races"', 1)[1].split("</table>", 1)[0]
    return table.split("<tbody>", 1)[1].split("</tr>")[:-1]


def room_race_id(app: FastAPI, code: str) -> int:
    from app.db.models import Race

    with app.state.services.sessions() as db:
        found = db.scalar(select(Race.id).where(Race.room_code == code))
    assert found is not None
    return int(found)


def test_the_browser_queues_and_lands_in_the_rated_race_room(
    app: FastAPI, guard: HiddenCardGuard, at_once: None
) -> None:
    with (
        TestClient(app, base_url="http://testserver", client=("192.0.2.1", 1)) as one,
        TestClient(app, base_url="http://testserver", client=("192.0.2.2", 1)) as two,
    ):
        for c in (one, two):
            c.event_hooks["response"].append(guard.check)
        home = one.get("/")
        assert "Race a stranger (rated)" in home.text
        waiting = post(one, "/races/queue", {"game": GAME}, htmx=False)
        assert waiting.headers["location"] == "/races/queue"
        page = one.get("/races/queue")
        assert 'hx-trigger="every 2s"' in page.text and "queue-waiting" in page.text
        formed = post(two, "/races/queue", {"game": GAME}, htmx=False)
        assert formed.headers["location"].startswith("/rooms/")
        polled = one.get("/races/queue", headers={"HX-Request": "true"})
        assert polled.headers["HX-Redirect"] == formed.headers["location"]
        room = one.get(formed.headers["location"])
        assert "A rated race" in room.text
        assert one.get(f"/leaderboard/races/{GAME}").status_code == 200


def test_two_accounts_of_one_browser_are_never_paired_even_from_two_addresses(
    app: FastAPI, guard: HiddenCardGuard, at_once: None
) -> None:
    """A browser that signs in as a second account keeps its id: the two accounts wait for
    others, even when the second one queues from another address."""
    clients = [
        TestClient(app, base_url="http://testserver", client=(address, 1))
        for address in ("192.0.2.31", "192.0.2.32", "192.0.2.33", "192.0.2.34")
    ]
    maker, one, two, stranger = clients
    try:
        for c in clients:
            c.__enter__()
            c.event_hooks["response"].append(guard.check)
        second = f"s{secrets.token_hex(5)}"
        assert browser_post(maker, "/account/name", {"name": second}).status_code == 303
        assert browser_post(maker, "/account/password", {"password": PASSWORD}).status_code == 303
        # The browser queues as its anonymous player, then signs in as the other account …
        assert post(one, "/races/queue", {"game": GAME}, htmx=False).status_code == 303
        assert (
            browser_post(one, "/signin", {"name": second, "password": PASSWORD}).status_code == 303
        )
        # … and, the same browser behind another address, queues that account too.
        two.cookies.update(one.cookies)
        assert post(two, "/races/queue", {"game": GAME}, htmx=False).status_code == 303
        with app.state.services.sessions() as db:
            rows = db.execute(select(QueuedRacer.address, QueuedRacer.session_key)).all()
        assert len(rows) == 2 and rows[0].address != rows[1].address
        assert rows[0].session_key == rows[1].session_key  # one browser
        assert all(row.room_code is None for row in queued_rows(app))
        app.state.services.race_queue.form_due()
        assert all(row.room_code is None for row in queued_rows(app))  # no race of the two
        # A stranger races the first of them.
        formed = post(stranger, "/races/queue", {"game": GAME}, htmx=False)
        assert formed.headers["location"].startswith("/rooms/")
        taken = [row for row in queued_rows(app) if row.room_code is not None]
        assert len(taken) == 2 and len({row.session_key for row in taken}) == 2
    finally:
        for c in clients:
            c.__exit__(None, None, None)


def queued_rows(app: FastAPI) -> list[QueuedRacer]:
    with app.state.services.sessions() as db:
        return list(db.scalars(select(QueuedRacer).order_by(QueuedRacer.joined_at)).all())
