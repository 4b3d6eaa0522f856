"""Castle's End (rules.md §5): 1 deck all face up in 10 piles; the first card played to a
foundation chooses the base rank; foundations build up in suit with wrap, the tableau up or
down in suit without wrap."""

from __future__ import annotations

from app.engine.building import fits_up_in_suit, up_in_suit_refusal
from app.engine.cards import KING, rank_of, suit_of
from app.engine.layout import Fan, Layout, PileKind, row_of
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef
from app.engine.ruleset import Ruleset, fail, refuse
from app.engine.state import Pile, State

_PILES = 10


class CastlesEnd(Ruleset):
    slug = "castles-end"
    name = "Castle's End"
    blurb = N_(
        "One deck, every card face up. You choose the base rank with your first "
        "foundation move; ten piles build up or down in suit."
    )
    table_note = N_(
        "Your first foundation card sets the base rank; piles build up or down in "
        "suit, an Ace and a King are not neighbours."
    )
    shows_base_rank = True  # chosen by the first foundation move (E1): "—" until then
    all_face_up = True
    decks = 1
    layout = Layout(
        (
            *row_of(PileKind.FOUNDATION, "f", 4, 0, 3),
            *row_of(PileKind.TABLEAU, "t", _PILES, 1, 0, Fan.DOWN),
        ),
        rows=2,
        cols=_PILES,
    )

    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        piles: dict[str, Pile] = {f"t{j + 1}": tuple(cards[j:50:_PILES]) for j in range(_PILES)}
        piles["t1"] += (cards[50],)
        piles["t2"] += (cards[51],)
        piles.update({f"f{j + 1}": () for j in range(4)})
        return piles

    def base_rank(self, state: State) -> int | None:
        for f in self.foundations:
            if state.piles[f]:
                return rank_of(state.piles[f][0])
        return None

    def legal_moves(self, state: State) -> list[Move]:
        p, ids = state.piles, self.pile_ids
        base = self.base_rank(state)
        sources = [t for t in self.tableau if p[t]]
        if base is None:  # E1: only the choice of base
            return [Move(ids[t], ids[f]) for t in sources for f in self.foundations]
        moves = []
        empty_tableau = [t for t in self.tableau if not p[t]]
        neighbours: dict[int, list[int]] = {}  # card face → piles whose top it may go on
        for t in sources:
            top = p[t][-1]
            if rank_of(top) != 1:
                neighbours.setdefault(top - 1, []).append(t)
            if rank_of(top) != KING:
                neighbours.setdefault(top + 1, []).append(t)
        for src in sources:
            card, name = p[src][-1], ids[src]
            for f in self.foundations:
                if fits_up_in_suit(card, p[f], wrap=True, start=base):
                    moves.append(Move(name, ids[f]))
            moves.extend(Move(name, ids[t]) for t in neighbours.get(card, ()))
            moves.extend(Move(name, ids[t]) for t in empty_tableau)
        return moves

    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        self._refuse_from_foundation(src)
        if count != 1:
            fail("one_card_at_a_time", N_("Only the top card of a pile moves, one card at a time."))
        card, target = piles[src][-1], piles[dst]
        base = self.base_rank(state)
        if self.kind(dst) is PileKind.FOUNDATION:
            why = up_in_suit_refusal(card, target, wrap=True, start=base)
            if why:
                refuse(why)
        elif base is None:
            fail(
                "choose_base_first",
                N_(
                    "First choose the base: move a card to a foundation. Until then, nothing "
                    "else may move."
                ),
            )
        elif target:
            top = target[-1]
            if suit_of(card) != suit_of(top) or abs(rank_of(card) - rank_of(top)) != 1:
                fail(
                    "tableau_up_or_down",
                    N_(
                        "%(card)s cannot go on %(top)s: in the tableau a card goes on one of its "
                        "suit one rank higher or lower (an Ace and a King are not neighbours)."
                    ),
                    card=CardRef(card),
                    top=CardRef(top),
                )
        piles[src], piles[dst] = piles[src][:-1], (*target, card)
        return False
