"""Quadrangle (rules.md §2): 2 decks, 8 foundations from a dealt base rank, 12 tableau piles
building down in suit with wrap, refilled from the waste or stock; one pass through the stock."""

from __future__ import annotations

from app.engine.building import up_in_suit_refusal
from app.engine.cards import face, pred, rank_of, succ, suit_of
from app.engine.layout import Fan, Layout, PileKind, PileSpec, row_of
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef
from app.engine.ruleset import Ruleset, fail, refuse
from app.engine.state import Pile, State

_DEAL = Move("stock", "waste")


class Quadrangle(Ruleset):
    slug = "quadrangle"
    name = "Quadrangle"
    blurb = N_(
        "Two decks. Twelve piles build down in suit, wrapping from Ace to King; eight "
        "foundations climb from a base rank the deal chooses."
    )
    table_note = N_(
        "Foundations build up in suit from the base rank, past the King; piles build "
        "down in suit, a King may go on an Ace."
    )
    shows_base_rank = True
    decks = 2
    layout = Layout(
        (
            PileSpec("stock", PileKind.STOCK, 0, 0),
            PileSpec("waste", PileKind.WASTE, 0, 1),
            *row_of(PileKind.FOUNDATION, "f", 8, 0, 4),
            *row_of(PileKind.TABLEAU, "t", 12, 1, 0, Fan.DOWN),
        ),
        rows=2,
        cols=12,
    )

    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        piles: dict[str, Pile] = {f"t{j + 1}": tuple(cards[j:36:12]) for j in range(12)}
        piles["f1"] = (cards[36],)  # its rank is the base rank of all eight foundations
        piles.update({f"f{j}": () for j in range(2, 9)})
        piles["stock"] = tuple(reversed(cards[37:]))
        piles["waste"] = ()
        return piles

    def base_rank(self, state: State) -> int:
        return rank_of(state.piles[self.foundations[0]][0])

    def legal_moves(self, state: State) -> list[Move]:
        p, ids = state.piles, self.pile_ids
        moves = [_DEAL] if p[self.stock] else []
        base = self.base_rank(state)
        fits_foundation: dict[int, list[int]] = {}
        empty_foundations = []
        for i in self.foundations:
            foundation = p[i]
            if not foundation:
                empty_foundations.append(i)
            elif len(foundation) < 13:
                top = foundation[-1]
                fits_foundation.setdefault(face(succ(rank_of(top)), suit_of(top)), []).append(i)
        fits_tableau: dict[int, list[int]] = {}
        empty_tableau = []
        for i in self.tableau:
            pile = p[i]
            if pile:
                top = pile[-1]
                fits_tableau.setdefault(face(pred(rank_of(top)), suit_of(top)), []).append(i)
            else:
                empty_tableau.append(i)
        sources = [i for i in self.tableau if p[i]]
        if p[self.waste]:
            sources.append(self.waste)
        for src in sources:
            card, name = p[src][-1], ids[src]
            for f in fits_foundation.get(card, ()):
                moves.append(Move(name, ids[f]))
            if rank_of(card) == base:
                moves.extend(Move(name, ids[f]) for f in empty_foundations)
            moves.extend(Move(name, ids[t]) for t in fits_tableau.get(card, ()) if t != src)
            if src != self.waste:
                moves.extend(Move(name, ids[t]) for t in empty_tableau)
        return moves

    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        if src == self.stock:
            return self._deal_one(piles, src, dst, count)
        self._refuse_from_foundation(src)
        if dst == self.stock:
            fail(
                "stock_once",
                N_("Cards never go back to the stock: Quadrangle deals the stock only once."),
            )
        if dst == self.waste:
            fail("only_stock_to_waste", N_("Only the stock deals to the waste."))
        if count != 1:
            fail("one_card_at_a_time", N_("Only the top card of a pile moves, one card at a time."))
        card = piles[src][-1]
        target = piles[dst]
        if self.kind(dst) is PileKind.FOUNDATION:
            why = up_in_suit_refusal(card, target, wrap=True, start=self.base_rank(state))
            if why:
                refuse(why)
        elif not target:
            if src == self.waste:
                fail(
                    "empty_pile_from_tableau",
                    N_("An empty pile takes only the top card of another tableau pile."),
                )
        elif suit_of(card) != suit_of(target[-1]) or rank_of(card) != pred(rank_of(target[-1])):
            fail(
                "tableau_down_wrap",
                N_(
                    "%(card)s cannot go on %(top)s: the tableau builds down by one in suit (a "
                    "King may go on an Ace)."
                ),
                card=CardRef(card),
                top=CardRef(target[-1]),
            )
        piles[src], piles[dst] = piles[src][:-1], (*target, card)
        if self.kind(src) is PileKind.TABLEAU and not piles[src]:
            return self._refill(piles, src)
        return False

    def _refill(self, piles: list[Pile], pile: int) -> bool:
        """Q4: an emptied pile takes the waste top, else the stock top, in the same step."""
        for source in (self.waste, self.stock):
            if piles[source]:
                piles[pile], piles[source] = (piles[source][-1],), piles[source][:-1]
                return source == self.stock
        return False
