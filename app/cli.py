"""Operator commands: ``python -m app.cli check-replays [--game-id ID]`` and
``python -m app.cli certify --game G --count N``.

``check-replays`` replays every game's move log (or one game's) from its deal over the
configured DATABASE_URL and DEAL_KEY, and exits non-zero if any stored state differs.

``certify`` judges deals 1, 2, 3, … of a game with the solver (every card known) until the
pool of certified winnable deals holds N; each verdict is stored at once, so it can be stopped
and run again to resume. ``POST /api/games {"winnable": true}`` draws from that pool.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.engine import GAMES
from app.services.replays import check_replays, open_games
from app.services.solver import CERTIFY_NODES, CERTIFY_SECONDS, Verdict, open_solver


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m app.cli", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    replays = commands.add_parser(
        "check-replays", help="replay move logs and compare them with the stored states"
    )
    replays.add_argument("--game-id", help="check only this game")
    certify = commands.add_parser(
        "certify", help="fill the pool of deals the solver has proved winnable"
    )
    certify.add_argument("--game", required=True, choices=sorted(GAMES), help="game slug")
    certify.add_argument("--count", required=True, type=int, help="deals the pool should hold")
    certify.add_argument(
        "--nodes", type=int, default=CERTIFY_NODES, help="positions searched per deal at most"
    )
    certify.add_argument(
        "--seconds", type=float, default=CERTIFY_SECONDS, help="seconds per deal at most"
    )
    certify.add_argument(
        "--max-deals",
        type=int,
        default=None,
        help="deals judged in this run at most (default: 20 per deal wanted, at least 100)",
    )
    certify.add_argument(
        "--max-minutes", type=float, default=60.0, help="minutes this run may take at most"
    )
    return parser


def _progress_bar(have: int, want: int, verdict: Verdict | None) -> None:
    width = 30
    done = min(width, width * have // max(1, want))
    judged = f" deal {verdict.deal}: {verdict.outcome.value}" if verdict else ""
    end = "\n" if have >= want else ""
    print(
        f"\r[{'#' * done}{'.' * (width - done)}] {have}/{want} certified{judged}".ljust(72),
        end=end,
        file=sys.stderr,
        flush=True,
    )


def certify_command(
    settings: Settings,
    game: str,
    count: int,
    nodes: int,
    seconds: float,
    max_deals: int | None = None,
    max_minutes: float = 60.0,
) -> int:
    if count < 1 or nodes < 1 or seconds <= 0 or max_minutes <= 0 or (max_deals or 1) < 1:
        print(
            "--count, --nodes, --seconds, --max-deals and --max-minutes must be positive.",
            file=sys.stderr,
        )
        return 2
    try:
        with open_solver(settings.database_url, settings.deal_key_bytes) as solver:
            have = solver.certify(
                game,
                count,
                nodes=nodes,
                seconds=seconds,
                max_deals=max_deals,
                max_seconds=max_minutes * 60,
                progress=_progress_bar,
            )
    except SQLAlchemyError as exc:
        print(f"Cannot use the database: {exc}", file=sys.stderr)
        return 2
    if have < count:
        print(file=sys.stderr)  # end the progress line
        print(
            f"{GAMES[game].name}: stopped at the deal or time limit with {have} certified "
            f"winnable deals in the pool, short of {count}"
            + (" (the pool is empty)." if not have else "."),
        )
        return 0
    print(f"{GAMES[game].name}: {have} certified winnable deals in the pool.")
    return 0


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
    if args.command == "certify":
        return certify_command(
            settings,
            args.game,
            args.count,
            args.nodes,
            args.seconds,
            args.max_deals,
            args.max_minutes,
        )
    raise AssertionError(args.command)  # pragma: no cover - argparse refuses other commands


if __name__ == "__main__":
    sys.exit(main())
