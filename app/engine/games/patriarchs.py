"""Patriarchs (rules.md §6): 2 decks; the first deck's Aces and Kings start eight foundations,
building up and down in suit; 9 reserves refilled from the waste, then the stock; one redeal;
the two foundations of a suit may trade cards where they meet."""

from __future__ import annotations

from app.engine.building import down_in_suit_refusal, up_in_suit_refusal
from app.engine.cards import ACE, KING, SUIT_SYMBOLS, face, rank_of, suit_of
from app.engine.deals import canonical_deck
from app.engine.layout import Layout, PileKind, PileSpec
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef, SuitRef
from app.engine.ruleset import Ruleset, fail, refuse
from app.engine.state import Pile, State

_DEAL = Move("stock", "waste")
_F, _R = PileKind.FOUNDATION, PileKind.RESERVE


class Patriarchs(Ruleset):
    slug = "patriarchs"
    name = "Patriarchs"
    blurb = N_(
        "Two decks. Aces build up on one side, Kings down on the other, fed from a "
        "three-by-three reserve; the two meet in the middle."
    )
    table_note = N_(
        "Left column: Aces building up ↑. Right column: Kings building down ↓. The "
        "3×3 reserve and the waste feed them."
    )
    decks = 2
    max_redeals = 1
    # Aces column, the 3×3 reserve square, Kings column; stock and waste below the square.
    layout = Layout(
        (
            PileSpec("stock", PileKind.STOCK, 3, 1),
            PileSpec("waste", PileKind.WASTE, 3, 2),
            *[PileSpec(f"f{s + 1}", _F, s, 0, label=f"{SUIT_SYMBOLS[s]} A↑") for s in range(4)],
            *[PileSpec(f"f{s + 5}", _F, s, 4, label=f"{SUIT_SYMBOLS[s]} K↓") for s in range(4)],
            *[PileSpec(f"r{i + 1}", _R, i // 3, 1 + i % 3) for i in range(9)],
        ),
        rows=4,
        cols=5,
    )

    def deck(self) -> list[int]:
        first = [c for c in range(52) if rank_of(c) not in (ACE, KING)]
        return first + canonical_deck(1)

    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        piles: dict[str, Pile] = {}
        for s in range(4):
            piles[f"f{s + 1}"] = (face(ACE, s),)
            piles[f"f{s + 5}"] = (face(KING, s),)
        piles.update({f"r{i + 1}": (cards[i],) for i in range(9)})
        piles["stock"] = tuple(reversed(cards[9:]))
        piles["waste"] = ()
        return piles

    def legal_moves(self, state: State) -> list[Move]:
        p, ids = state.piles, self.pile_ids
        moves = [_DEAL] if p[self.stock] else self.redeal_moves(state)
        ups, downs = self.foundations[:4], self.foundations[4:]
        for src in (*self.reserves, self.waste):
            if p[src]:
                card = p[src][-1]
                s, r = suit_of(card), rank_of(card)
                up, down = ups[s], downs[s]
                if r == rank_of(p[up][-1]) + 1:  # P6: a card that fits both is offered to both
                    moves.append(Move(ids[src], ids[up]))
                if r == rank_of(p[down][-1]) - 1:
                    moves.append(Move(ids[src], ids[down]))
        for up, down in zip(ups, downs):  # P5: transfers where the two meet
            if rank_of(p[down][-1]) == rank_of(p[up][-1]) + 1:
                if len(p[up]) > 1:
                    moves.append(Move(ids[up], ids[down]))
                if len(p[down]) > 1:
                    moves.append(Move(ids[down], ids[up]))
        return moves

    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        if src == self.stock:
            return self._deal_one(piles, src, dst, count)
        if src == self.waste and dst == self.stock:
            self._turn_waste_over(piles, state, count)
            return False  # every card turned over was seen on the waste
        if self.kind(dst) is not PileKind.FOUNDATION:
            if self.kind(src) is PileKind.FOUNDATION:
                fail(
                    "foundation_transfer_suit",
                    N_("A foundation card may move only to the other foundation of its own suit."),
                )
            fail(
                "patriarchs_foundations_only",
                N_(
                    "In Patriarchs cards go only to the foundations: nothing may be put on a "
                    "reserve, and only the stock deals to the waste."
                ),
            )
        if count != 1:
            fail("foundation_one_at_a_time", N_("Cards go to a foundation one at a time."))
        card, target = piles[src][-1], piles[dst]
        ascending = self.foundations.index(dst) < 4
        if self.kind(src) is PileKind.FOUNDATION:
            self._check_transfer(piles, src, dst)
        elif suit_of(target[0]) != suit_of(card):
            fail(
                "foundation_other_suit",
                N_("%(card)s cannot go on foundation %(pile)s: it builds %(suit)s only."),
                card=CardRef(card),
                pile=self.pile_ids[dst],
                suit=SuitRef(suit_of(target[0])),
            )
        why = (
            up_in_suit_refusal(card, target, wrap=False, start=None)
            if ascending
            else down_in_suit_refusal(card, target)
        )
        if why:
            refuse(why)
        piles[src], piles[dst] = piles[src][:-1], (*target, card)
        if self.kind(src) is PileKind.RESERVE and not piles[src]:
            return self._refill(piles, src)
        return False

    def _check_transfer(self, piles: list[Pile], src: int, dst: int) -> None:
        """P5: between the Ace and King foundations of one suit, only where they meet."""
        i, j = self.foundations.index(src), self.foundations.index(dst)
        if i % 4 != j % 4:
            fail(
                "foundation_transfer_suit",
                N_("A foundation card may move only to the other foundation of its own suit."),
            )
        if len(piles[src]) == 1:
            if i < 4:
                fail("bottom_ace_stays", N_("The bottom Ace of a foundation never moves."))
            fail("bottom_king_stays", N_("The bottom King of a foundation never moves."))
        up, down = (piles[src], piles[dst]) if i < 4 else (piles[dst], piles[src])
        if rank_of(down[-1]) != rank_of(up[-1]) + 1:
            fail(
                "foundations_meet",
                N_(
                    "The two %(suit)s foundations trade cards only where they meet (%(up)s and "
                    "%(down)s do not)."
                ),
                suit=SuitRef(i % 4),
                up=CardRef(up[-1]),
                down=CardRef(down[-1]),
            )

    def _refill(self, piles: list[Pile], reserve: int) -> bool:
        """P3: an emptied reserve takes the waste top, else the stock top."""
        for source in (self.waste, self.stock):
            if piles[source]:
                piles[reserve], piles[source] = (piles[source][-1],), piles[source][:-1]
                return source == self.stock
        return False
