"""Operator commands: ``python -m app.cli check-replays [--game-id ID]``,
``python -m app.cli certify --game G --count N``, ``python -m app.cli migrate``,
``python -m app.cli preflight``, ``python -m app.cli player …``, ``python -m app.cli event
create --game G --starts ISO --minutes N [--every MIN [--times K]]`` and ``python -m app.cli
recount``.

``migrate`` brings the schema up to date (under PostgreSQL's advisory lock: several at once
are safe) and then checks the DEAL_KEY against the database's fingerprint (recording it on a new
database); ``preflight`` only checks. Both exit 78 (EX_CONFIG) with the reason when production
must not start.

``player rename OLD NEW``, ``player ban NAME`` (``--undo`` lifts it), ``player revoke NAME``
(signs out every browser session and drops the API token) and ``player delete NAME`` (the
account's personal data goes; its games stay under a ghost name).

``check-replays`` replays every game's move log (or one game's) from its deal over the
configured DATABASE_URL and DEAL_KEY, and exits non-zero if any stored state differs.

``certify`` judges deals 1, 2, 3, … of a game with the solver (every card known) until the
pool of certified winnable deals holds N; each verdict is stored at once, so it can be stopped
and run again to resume. ``POST /api/games {"winnable": true}`` draws from that pool.
"""

from __future__ import annotations

import argparse
import logging
import logging.config
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from app.bootstrap import opened
from app.config import PROJECT_DIR, Settings, refusals
from app.engine import GAMES
from app.services.accounts import Accounts
from app.services.errors import ServiceError
from app.services.recount import recount
from app.services.replays import check_replays
from app.services.solver_jobs import CERTIFY_NODES, CERTIFY_SECONDS, Verdict


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
    commands.add_parser("migrate", help="migrate the database, then check the DEAL_KEY")
    commands.add_parser("preflight", help="check the settings and the DEAL_KEY, start nothing")
    player = commands.add_parser("player", help="an operator's tools for one player")
    acts = player.add_subparsers(dest="action", required=True)
    rename = acts.add_parser("rename", help="give a player another name")
    rename.add_argument("name")
    rename.add_argument("new_name")
    ban = acts.add_parser("ban", help="ban: games stop counting, no rated games")
    ban.add_argument("name")
    ban.add_argument("--undo", action="store_true", help="lift the ban")
    revoke = acts.add_parser("revoke", help="sign out every session and drop the API token")
    revoke.add_argument("name")
    delete = acts.add_parser("delete", help="delete the account (games stay, anonymous)")
    delete.add_argument("name")
    event = commands.add_parser("event", help="schedule events (arenas)")
    event_acts = event.add_subparsers(dest="action", required=True)
    create = event_acts.add_parser("create", help="schedule an event, or a series of them")
    create.add_argument("--game", required=True, choices=sorted(GAMES), help="game slug")
    create.add_argument(
        "--starts", required=True, help="the start, ISO 8601 with a time zone (2026-12-01T18:00Z)"
    )
    create.add_argument("--minutes", required=True, type=int, help="how long it runs")
    create.add_argument(
        "--every", type=int, default=None, help="repeat: minutes between starts (1440: daily)"
    )
    create.add_argument(
        "--times", type=int, default=None, help="events in the series (default with --every: 7)"
    )
    commands.add_parser(
        "recount",
        help="recompute standings, streaks and ratings from the stored games; compare",
    )
    return parser


def event_command(settings: Settings, args: argparse.Namespace) -> int:
    try:
        starts = datetime.fromisoformat(args.starts.replace("Z", "+00:00"))
    except ValueError:
        print("--starts is a date and time, e.g. 2026-12-01T18:00Z.", file=sys.stderr)
        return 2
    times = args.times if args.times is not None else (7 if args.every else 1)
    try:
        with opened(settings) as services:
            made = services.arenas.create(args.game, starts, args.minutes, args.every, times)
    except ServiceError as exc:
        print(exc.message, file=sys.stderr)
        return 2
    except SQLAlchemyError as exc:
        print(f"Cannot use the database: {exc}", file=sys.stderr)
        return 2
    for e in made:
        print(f"event {e.id}: {GAMES[e.game].name}, {e.starts_at.isoformat()} to "
              f"{e.ends_at.isoformat()}")  # fmt: skip
    return 0


EX_CONFIG = 78
_log = logging.getLogger("patience_hall.cli")
# Set when this process's logging is app.serve's JSON configuration (``python -m app.cli
# migrate|preflight`` with JSON_LOGS): every logger's lines are JSON then, warnings included.
_json_configured = False


def _json_line(message: str, level: int, name: str = "patience_hall.cli") -> str:
    from app.web.http.observe import JsonFormatter

    record = logging.LogRecord(name, level, __file__, 0, message, None, None)
    return JsonFormatter().format(record)


def say(message: str, level: int = logging.INFO, json_lines: bool | None = None) -> None:
    """A line of the service commands (``migrate``, ``preflight``, the start script's settings
    check) on stderr: one JSON object with ``JSON_LOGS`` (as every other line the containers
    write), ``patience-hall: <message>`` without."""
    from app.serve import json_logs_wanted

    if json_lines is None:
        json_lines = json_logs_wanted()
    if not json_lines:
        print(f"patience-hall: {message}", file=sys.stderr)
    elif _json_configured:
        _log.log(level, message)
    else:
        print(_json_line(message, level), file=sys.stderr, flush=True)


@contextmanager
def _alembic_lines_as_json(json_lines: bool) -> Iterator[None]:
    """alembic's lines (the steps of a migration) as JSON while it runs, without touching the
    rest of this process's logging (``main`` may be called in a process of its own)."""
    if not json_lines or _json_configured:
        yield
        return
    from app.web.http.observe import JsonFormatter

    logger = logging.getLogger("alembic")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def preflight_command(settings: Settings, migrate: bool) -> int:
    from app.bootstrap import preflight

    problems = refusals(settings)
    if not problems and migrate:
        from alembic import command
        from alembic.config import Config

        config = Config(str(PROJECT_DIR / "alembic.ini"))
        config.set_main_option("sqlalchemy.url", settings.database_url)
        # With JSON_LOGS alembic's lines go through the JSON handler (not alembic.ini's).
        config.attributes["configure_logger"] = not settings.json_logs
        with _alembic_lines_as_json(settings.json_logs):
            command.upgrade(config, "head")
        if make_url(settings.database_url).get_backend_name() == "postgresql":
            from app.jobs import apply_schema, defer_fill, make_jobs

            apply_schema(settings.database_url)  # the solver workers' queue
            if settings.certified_pool_target > 0:  # the pools fill in the background
                with make_jobs(settings.database_url).open() as queue:
                    for game in GAMES:
                        defer_fill(game, queue)
    if not problems:
        problems = preflight(settings)
    for problem in problems:
        say(problem, logging.ERROR, settings.json_logs)
    if problems:
        return EX_CONFIG
    say(f"ready (APP_ENV={settings.app_env})", json_lines=settings.json_logs)
    return 0


def player_command(settings: Settings, args: argparse.Namespace) -> int:
    with opened(settings) as services:
        return _player_action(services.accounts, args)


def _player_action(accounts: Accounts, args: argparse.Namespace) -> int:
    try:
        if args.action == "rename":
            done = f"{args.name} is now {accounts.rename(args.name, args.new_name)}."
        elif args.action == "ban":
            player = accounts.ban(args.name, banned=not args.undo)
            done = f"{player.name} is {'no longer banned' if args.undo else 'banned'}."
        elif args.action == "revoke":
            player = accounts.revoke(args.name)
            done = f"{player.name}: every session and the API token are revoked."
        else:
            done = (
                f"{args.name} is deleted; their games stay as {accounts.admin_delete(args.name)}."
            )
    except ServiceError as exc:
        print(exc.message, file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:
        print(f"Cannot use the database: {exc}", file=sys.stderr)
        return 2
    print(done)
    return 0


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
    if (
        count < 1
        or nodes < 1
        or seconds <= 0
        or max_minutes <= 0
        or (max_deals is not None and max_deals < 1)
    ):
        print(
            "--count, --nodes, --seconds, --max-deals and --max-minutes must be positive.",
            file=sys.stderr,
        )
        return 2
    try:
        with opened(settings) as services:
            have = services.solver.certify(
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
        with opened(settings) as services:
            for result in check_replays(services.games, game_id):
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


def recount_command(settings: Settings) -> int:
    """Recomputes every challenge standing and streak, event standing and race rating from the
    stored games (each game's result replayed from its move log) and compares them with what
    the app shows; exit 1 on any difference."""
    try:
        with opened(settings) as services:
            report = recount(services)
    except SQLAlchemyError as exc:
        print(f"Cannot read the database: {exc}", file=sys.stderr)
        return 2
    for line in report.problems:
        print(f"MISMATCH {line}")
    print(
        f"Recounted {report.games} games: {report.challenge_days} challenge days, "
        f"{report.streaks} streaks, {report.events} events, {report.races} rated races; "
        f"{len(report.problems)} differences."
    )
    return 1 if report.problems else 0


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
    if args.command in ("migrate", "preflight"):
        return preflight_command(settings, migrate=args.command == "migrate")
    if args.command == "player":
        return player_command(settings, args)
    if args.command == "event":
        return event_command(settings, args)
    if args.command == "recount":
        return recount_command(settings)
    raise AssertionError(args.command)  # pragma: no cover - argparse refuses other commands


def _service_logging(argv: Sequence[str]) -> None:
    """``migrate`` and ``preflight`` are services' commands (docker-compose.yml, the start
    script): with JSON_LOGS every line this process writes is JSON, as the app's and the
    workers' are."""
    global _json_configured
    from app.serve import json_log_config, json_logs_wanted

    if argv[:1] and argv[0] in ("migrate", "preflight") and json_logs_wanted():
        logging.config.dictConfig(json_log_config())
        _json_configured = True


if __name__ == "__main__":
    _service_logging(sys.argv[1:])
    sys.exit(main())
