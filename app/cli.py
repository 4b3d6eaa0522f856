"""Operator commands: ``python -m app.cli check-replays [--game-id ID]``.

``check-replays`` replays every game's move log (or one game's) from its deal over the
configured DATABASE_URL and DEAL_KEY, and exits non-zero if any stored state differs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.services.replays import check_replays, open_games


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.cli", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    replays = commands.add_parser(
        "check-replays", help="replay move logs and compare them with the stored states"
    )
    replays.add_argument("--game-id", help="check only this game")
    return parser


def check_replays_command(settings: Settings, game_id: str | None) -> int:
    checked = failed = 0
    try:
        with open_games(settings.database_url, settings.deal_key_bytes) as games:
            for result in check_replays(games, game_id):
                checked += 1
                if not result.ok:
                    failed += 1
                    print(f"MISMATCH {result.game_id}: {result.problem}")
    except SQLAlchemyError as exc:
        print(f"Cannot read the database: {exc}", file=sys.stderr)
        return 2
    games_word = "game" if checked == 1 else "games"
    print(f"Checked {checked} {games_word}: {checked - failed} ok, {failed} mismatched.")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None, settings: Settings | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = settings or Settings()
    if args.command == "check-replays":
        return check_replays_command(settings, args.game_id)
    raise AssertionError(args.command)  # pragma: no cover - argparse refuses other commands


if __name__ == "__main__":
    sys.exit(main())
