"""Games: starting, reading and watching them, and the browser's compound actions.

A game's changes — move, undo, resign — are one skeleton with a policy each
(app/services/game_actions.py); finished games' replays are in app/services/replay_views.py;
what they share is app/services/game_base.py. :class:`Games` is all of them, as the web sees it.

A browser action is one call: :meth:`Games.play` (the player's move, then the auto-move
preference's cards, each an ordinary logged move), :meth:`Games.finish`, :meth:`Games.restart`.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from functools import partial

from anyio import to_thread
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.db.game_rows import GAME, GameRow
from app.db.models import Game, Player
from app.db.move_store import Transactions
from app.engine import (
    MAX_DEAL,
    RULES_VERSION,
    InvalidDeal,
    Move,
    Ruleset,
    State,
    Status,
    UnknownGame,
    get_ruleset,
    loads,
)
from app.engine.deals import check_deal_number
from app.engine.seen import seen_slots, shared_faces, slot_faces
from app.services import same_deal, stats
from app.services.errors import (
    DealInPlay,
    DealSealed,
    GameInPlay,
    GameOver,
    InvalidRequest,
    NotFound,
    NothingToFinish,
    NotInChallenge,
    SameDealInPlay,
    ServiceError,
)
from app.services.game_actions import MAX_IDEMPOTENCY_KEY, Acted, GameActions
from app.services.game_base import DEFAULT_MAX_MOVES, initial_status, status_of
from app.services.game_views import GameView, MoveOutcome, Played
from app.services.players import new_id
from app.services.replay_views import Replays
from app.services.seal import Seal, SealKind, check_race_read, opened_to_all, race_running
from app.services.state_texts import STATES

__all__ = ["DEFAULT_MAX_MOVES", "MAX_IDEMPOTENCY_KEY", "Games", "initial_status"]


class Games(GameActions, Replays):
    """The game use cases, bound to a database and the server's deal key."""

    def draw_deal(self) -> int:
        """A deal number drawn uniformly from 1..MAX_DEAL."""
        return self._rng.randint(1, MAX_DEAL)

    def start(self, player_id: str, slug: str, deal: int | None = None) -> GameView:
        """A new game: of a deal the server draws (rated), or of the chosen number (casual:
        anyone may have scouted a chosen deal's cards, in another game of it)."""
        try:
            rules = get_ruleset(slug)
            number = self._rng.randint(1, MAX_DEAL) if deal is None else check_deal_number(deal)
        except (UnknownGame, InvalidDeal) as exc:
            raise InvalidRequest.of(exc.words) from None
        rated = deal is None
        self._end_stuck(player_id)
        state = rules.deal(number, self.deal_key)
        stamp = self.stamps()
        with self.sessions.begin() as db:
            name = db.scalar(select(Player.name).where(Player.id == player_id))
            if name is None:
                raise NotFound("No such player.")
            if not rated:
                # One unfinished game per deal: a second one would let the player see cards
                # that are still hidden in the first (a drawn number is never drawn again).
                in_play = db.scalar(
                    select(Game.id).where(
                        Game.player_id == player_id,
                        Game.game == slug,
                        Game.deal == number,
                        Game.status == Status.PLAYING,
                    )
                )
                if in_play is not None:
                    raise DealInPlay(in_play)
                self.sealer.refuse_start(db, slug, number)
            return self._deal(db, player_id, name, rules, number, state, stamp, rated=rated)

    def deal_own(self, db: Session, player_id: str, slug: str, number: int, kind: str) -> GameView:
        """A game of a deal of the player's own in a competition (``kind``: "challenge" or
        "event"), inside the caller's transaction (which claimed the deal: app/services/pool.py).
        Casual for win rates; no hints, no undo."""
        rules = get_ruleset(slug)
        name = db.scalar(select(Player.name).where(Player.id == player_id))
        if name is None:
            raise NotFound("No such player.")
        state = rules.deal(number, self.deal_key)
        return self._deal(
            db,
            player_id,
            name,
            rules,
            number,
            state,
            self.stamps(),
            rated=False,
            competition=kind,
        )

    def _deal(
        self,
        db: Session,
        player_id: str,
        name: str,
        rules: Ruleset,
        number: int,
        state: State,
        stamp: datetime,
        *,
        rated: bool,
        competition: str | None = None,
    ) -> GameView:
        legal = rules.legal_moves(state)
        record = GameRow.dealt(
            new_id(),
            player_id,
            rules.slug,
            number,
            STATES.dumps(state),
            status_of(rules, state, legal, False),
            stamp,
            rules=RULES_VERSION,
            rated=rated,
            competition=competition,
        )
        db.execute(insert(GAME).values(**vars(record)))
        if rated:  # it counts as played from now on: the player has seen the layout
            stats.count_dealt(db.connection(), record, stamp)
        return self._new_view(record, name, rules, state, legal)

    def _end_stuck(self, player_id: str) -> None:
        """A game left with no legal move, only an undo, ends (as lost) when its player starts
        another game (contract v2, "No moves left"): it must not wait for ever to be counted."""
        with self.sessions() as db:
            waiting = db.execute(
                select(Game.id, Game.game, Game.state).where(
                    Game.player_id == player_id,
                    Game.status == Status.PLAYING,
                    Game.can_undo.is_(True),
                )
            ).all()
        for game_id, slug, text in waiting:
            if not get_ruleset(slug).legal_moves(loads(text)):
                with suppress(GameOver):  # it ended meanwhile (another tab)
                    self.resign(game_id, player_id)

    def get(self, game_id: str, viewer: str | None) -> GameView:
        """A game as ``viewer`` (None: nobody signed in) may see it: the same-deal rule."""
        with self.sessions() as db:
            record, name = self._load(db, game_id)
            if viewer == record.player_id:
                return self._view(db, record, name)
            check_race_read(db, record.race_id, record.player_id, viewer)
            related = same_deal.relation(db, viewer, record.game, record.deal)
            same_deal.check_may_see(record.player_id, viewer, related)
            everything = same_deal.sees_everything(record.player_id, viewer, related) or (
                opened_to_all(record.competition)
                and record.status != Status.PLAYING
                and self.sealer.of(db, record.game, record.deal) is None
            )
            return self._view(db, record, name, masked=not everything)

    def play(
        self, game_id: str, player_id: str | None, move: Move | None, version: int, *, auto: bool
    ) -> Played:
        """A browser's move: the player's ``move`` (None: the Deal button), then, with the
        auto-move preference, every card that may go up by itself (``Ruleset.auto_move``),
        each an ordinary logged move of its own (rules.md §0). Refusals of the player's move
        raise as for :meth:`move`; an auto-move that another tab's move got ahead of just ends
        the run: the answer shows the board as it is."""
        return self._play(
            self.store.transaction, self._after, game_id, player_id, move, version, auto
        )

    async def play_async(
        self, game_id: str, player_id: str | None, move: Move | None, version: int, *, auto: bool
    ) -> Played:
        """:meth:`play`, awaited on the event loop: the move and its auto-moves in one run on
        the loop's connections (app/db/move_store.py, ``InlineMoves``), or in the thread pool
        where the loop has none (SQLite). What follows a commit that may block (a race's
        events, a game's end) is done after the run, in a thread."""
        inline = self.store.inline_here()
        if inline is None:
            return await to_thread.run_sync(
                partial(self.play, game_id, player_id, move, version, auto=auto)
            )
        pending: list[Acted] = []

        def later(acted: Acted) -> MoveOutcome:
            if acted.pending:
                pending.append(acted)
            return acted.outcome

        work = partial(
            self._play, after=later, game_id=game_id, player_id=player_id, move=move,
            version=version, auto=auto,
        )  # fmt: skip
        try:
            return await inline.run(work)
        finally:
            if pending:  # also when a later auto-move failed: these moves are committed
                await to_thread.run_sync(lambda: [self._after(acted) for acted in pending])

    def _play(
        self,
        transactions: Transactions,
        after: Callable[[Acted], MoveOutcome],
        game_id: str,
        player_id: str | None,
        move: Move | None,
        version: int,
        auto: bool,
    ) -> Played:
        def play_one(chosen: Move | None, at: int) -> MoveOutcome:
            return after(self._move(transactions, game_id, player_id, chosen, at, None))

        first = play_one(move, version)
        view = first.view
        assert view.step is not None
        played = Played(view, [view.step])
        if not auto or view.finished:
            return played
        # The card the player just placed stays where they put it; a card dealt from the stock
        # was not placed by choice, so it may go up.
        keep = "" if view.step.move.source == "stock" else view.step.move.target
        for _ in range(view.rules.cards):
            if view.finished:
                break
            up = view.rules.auto_move(view.state, view.legal_moves, keep)
            if up is None:
                break
            try:
                view = play_one(up, view.record.version).view
            except ServiceError:
                break
            assert view.step is not None
            played.steps.append(view.step)
            played.view = view
        return played

    def finish(self, game_id: str, player_id: str | None) -> Played:
        """Auto-finish: when every card left can go up without a choice, they all go up, each
        an ordinary logged move; NothingToFinish when that is not so."""
        view = self.get(game_id, player_id)
        self._check_owner(view.record, player_id)
        plan = None if view.finished else view.rules.finish_moves(view.state, view.legal_moves)
        if not plan:
            raise NothingToFinish("Not every card left can go up by itself: play on.")
        played = Played(view, [])
        for up in plan:
            played.view = self.move(game_id, player_id, up, played.view.record.version).view
            assert played.view.step is not None
            played.steps.append(played.view.step)
        return played

    def restart(self, game_id: str, player_id: str) -> GameView:
        """The same deal from the start: the game in play is resigned (it counts as lost), then
        a new game of the same deal begins (a chosen deal, so casual)."""
        view = self.get(game_id, player_id)
        self._check_owner(view.record, player_id)
        if view.record.race_id is not None and not view.finished:
            # Restarting would quietly forfeit the race: leaving it is a resignation, said so.
            raise GameInPlay(
                "This game is part of a race that is still on: resign it to leave the race, "
                "then play the deal again."
            )
        if view.finished and view.seal is not None and view.seal.kind is SealKind.RACE:
            # A racer out of the race could otherwise deal the race's cards to itself and pass
            # them on to a racer still playing.
            raise DealSealed(
                "This deal is sealed while its race is on: play it again once the race is over."
            )
        if view.record.competition is not None and view.number_hidden:
            raise NotInChallenge("restart")  # one game a day, or the event's next deal
        if not view.finished:
            with suppress(GameOver):  # it ended meanwhile (another tab): nothing to resign
                self.resign(game_id, player_id)
        return self.start(player_id, view.record.game, view.record.deal)

    def spectate(self, game_id: str, viewer: str | None) -> GameView:
        """A racer's game as a spectator of its race sees it (contract v3): only the cards
        every racer of the race has seen are face up. Out of a running race, as :meth:`get`.
        A racer still playing the race watches nobody (the same-deal rule)."""
        with self.sessions() as db:
            record, name = self._load(db, game_id)
            plain = viewer == record.player_id or not race_running(db, record.race_id)
            racers = (
                []
                if plain
                else db.execute(
                    select(Game.player_id, Game.status, Game.state).where(
                        Game.race_id == record.race_id
                    )
                ).all()
            )
        if plain:
            # Outside the read above: ``get`` may write (SQLite would wait on this session).
            return self.get(game_id, viewer)
        if any(pid == viewer and status == Status.PLAYING for pid, status, _ in racers):
            raise SameDealInPlay()
        rules = get_ruleset(record.game)
        dealt = rules.deal(record.deal, self.deal_key)
        seen = [seen_slots(rules, dealt, loads(text)) for _, _, text in racers]
        watched = seen_slots(rules, dealt, loads(record.state))
        view = self._new_view(record, name, rules, loads(record.state), [], masked=True)
        view.seal = Seal(SealKind.RACE, None)
        view.faces = shared_faces(slot_faces(dealt), watched, seen)
        return view
