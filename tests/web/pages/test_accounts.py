"""The account pages (app/web/pages/accounts.py) on what the other tests leave out: a visitor
with no player, the password a deletion asks for, the message shown once, and the account's
preferences and language coming to the device it signs in on."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from tests.web.support import browser_post, new_game, post

PASSWORD = "correct horse battery staple"


def another_browser(client: TestClient) -> TestClient:
    """A second browser on the same app, checked like the first."""
    other = TestClient(client.app, base_url=str(client.base_url))
    other.event_hooks["response"] = list(client.event_hooks["response"])
    return other


def with_password(client: TestClient) -> str:
    """This browser's player gets a name and a password; returns the name."""
    new_game(client, "corners", 3)
    name = f"Acc_{uuid.uuid4().hex[:8]}"
    assert browser_post(client, "/account/name", {"name": name}).status_code == 303
    assert browser_post(client, "/account/password", {"password": PASSWORD}).status_code == 303
    return name


def test_a_visitor_with_no_player_has_no_data_and_nothing_to_delete(client: TestClient) -> None:
    export = client.get("/account/export")
    assert export.status_code == 404
    assert export.json()["error"]["code"] == "no_player"
    gone = browser_post(client, "/account/delete", {"confirm": "delete"})
    assert (gone.status_code, gone.headers["location"]) == (303, "/account")
    assert "You have not played yet" in client.get("/account").text  # and still no player


def test_signing_out_with_no_player_goes_home(client: TestClient) -> None:
    out = browser_post(client, "/signout", {})
    assert (out.status_code, out.headers["location"]) == (303, "/")


def test_the_message_after_an_action_is_shown_once(client: TestClient) -> None:
    name = f"Once_{uuid.uuid4().hex[:8]}"
    chosen = browser_post(client, "/account/name", {"name": name})
    assert (chosen.status_code, chosen.headers["location"]) == (303, "/account")
    said = f"You are now {name}."
    assert said in client.get("/account").text
    assert said not in client.get("/account").text


def test_an_account_with_a_password_is_deleted_only_with_it(client: TestClient) -> None:
    with_password(client)
    wrong = browser_post(client, "/account/delete", {"confirm": "delete", "password": "guess"})
    assert 400 <= wrong.status_code < 500 and "Account not deleted" in wrong.text
    assert client.get("/account/export").status_code == 200  # nothing was deleted
    done = browser_post(client, "/account/delete", {"confirm": "delete", "password": PASSWORD})
    assert done.status_code == 200 and "Your account is deleted" in done.text
    assert client.get("/account/export").status_code == 404


def test_signing_in_brings_the_accounts_preferences_and_language(client: TestClient) -> None:
    name = with_password(client)
    assert post(client, "/prefs", {"theme": "dark"}).status_code == 204
    assert post(client, "/lang", {"lang": "es", "back": "/"}).status_code == 303
    with another_browser(client) as phone:
        typed = f"  {name}  "  # the name is read without the spaces around it
        signed_in = browser_post(phone, "/signin", {"name": typed, "password": PASSWORD})
        assert (signed_in.status_code, signed_in.headers["location"]) == (303, "/account")
        cookies = " ".join(signed_in.headers.get_list("set-cookie"))
        assert "ph_prefs=" in cookies and "dark" in cookies and "lang=es" in cookies
        assert '<html lang="es">' in phone.get("/").text
