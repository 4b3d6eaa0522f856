"""Corners (rules.md §4): 1 deck, 4 fixed-suit foundations building up with wrap from their own
dealt base, 5 reserves in a cross refilled from the stock, 3 passes through the stock."""

from __future__ import annotations

from app.engine.building import up_in_suit_refusal
from app.engine.cards import SUIT_SYMBOLS, rank_of, succ, suit_of
from app.engine.layout import Layout, PileKind, PileSpec
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef, SuitRef
from app.engine.ruleset import Ruleset, fail, refuse
from app.engine.state import Pile, State

_DEAL = Move("stock", "waste")
_F, _R = PileKind.FOUNDATION, PileKind.RESERVE


class Corners(Ruleset):
    slug = "corners"
    name = "Corners"
    blurb = N_(
        "One deck. Four foundations in the corners, each from its own base card, fed "
        "from a cross of five reserves. Three passes through the stock."
    )
    table_note = N_(
        "Foundations in the corners build up in suit from their own base card; the "
        "reserves in the cross and the waste feed them."
    )
    decks = 1
    max_redeals = 2
    # Foundations in the four corners of a 3×3 square, reserves in the cross between them.
    layout = Layout(
        (
            PileSpec("stock", PileKind.STOCK, 3, 0),
            PileSpec("waste", PileKind.WASTE, 3, 1),
            PileSpec("f1", _F, 0, 0, label=SUIT_SYMBOLS[0]),
            PileSpec("f2", _F, 0, 2, label=SUIT_SYMBOLS[1]),
            PileSpec("f3", _F, 2, 0, label=SUIT_SYMBOLS[2]),
            PileSpec("f4", _F, 2, 2, label=SUIT_SYMBOLS[3]),
            PileSpec("r1", _R, 0, 1),
            PileSpec("r2", _R, 1, 0),
            PileSpec("r3", _R, 1, 1),
            PileSpec("r4", _R, 1, 2),
            PileSpec("r5", _R, 2, 1),
        ),
        rows=4,
        cols=3,
    )

    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        bases: dict[int, int] = {}
        rest: list[int] = []
        for card in cards:
            if suit_of(card) in bases:
                rest.append(card)
            else:
                bases[suit_of(card)] = card
        piles: dict[str, Pile] = {f"f{s + 1}": (bases[s],) for s in range(4)}
        piles.update({f"r{i + 1}": (rest[i],) for i in range(5)})
        piles["stock"] = tuple(reversed(rest[5:]))
        piles["waste"] = ()
        return piles

    def legal_moves(self, state: State) -> list[Move]:
        p, ids = state.piles, self.pile_ids
        moves = [_DEAL] if p[self.stock] else self.redeal_moves(state)
        for src in (*self.reserves, self.waste):
            if p[src]:
                card = p[src][-1]
                f = self.foundations[suit_of(card)]
                if len(p[f]) < 13 and rank_of(card) == succ(rank_of(p[f][-1])):
                    moves.append(Move(ids[src], ids[f]))
        return moves

    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        if src == self.stock:
            return self._deal_one(piles, src, dst, count)
        self._refuse_from_foundation(src)
        if src == self.waste and dst == self.stock:
            self._turn_waste_over(piles, state, count)
            # C4: vacant reserves are filled from the new stock in the order r1…r5.
            filled = [self._refill(piles, r) for r in self.reserves if not piles[r]]
            return any(filled)
        if self.kind(dst) is not PileKind.FOUNDATION:
            fail(
                "corners_foundations_only",
                N_("In Corners cards go only to the foundations: nothing is built anywhere else."),
            )
        if count != 1:
            fail("foundation_one_at_a_time", N_("Cards go to a foundation one at a time."))
        card = piles[src][-1]
        target = piles[dst]
        if suit_of(target[0]) != suit_of(card):
            fail(
                "foundation_other_suit",
                N_("%(card)s cannot go on foundation %(pile)s: it builds %(suit)s only."),
                card=CardRef(card),
                pile=self.pile_ids[dst],
                suit=SuitRef(suit_of(target[0])),
            )
        why = up_in_suit_refusal(card, target, wrap=True, start=None)
        if why:
            refuse(why)
        piles[src], piles[dst] = piles[src][:-1], (*target, card)
        if self.kind(src) is PileKind.RESERVE and not piles[src]:
            return self._refill(piles, src)
        return False

    def _refill(self, piles: list[Pile], reserve: int) -> bool:
        """C3: an emptied reserve takes the stock top (never the waste), if there is one."""
        stock = piles[self.stock]
        if not stock:
            return False
        piles[reserve], piles[self.stock] = (stock[-1],), stock[:-1]
        return True
