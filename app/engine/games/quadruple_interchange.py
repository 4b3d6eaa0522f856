"""Quadruple Interchange (rules.md §3): 4 decks, 16 foundations A → K, 11 tableau piles with
alternate face-down cards, same-suit runs that move together, any card or run into an empty
pile; one pass through the stock."""

from __future__ import annotations

from app.engine.building import up_in_suit_refusal
from app.engine.cards import ACE, KING, rank_of, suit_of
from app.engine.layout import Fan, Layout, PileKind, PileSpec, row_of
from app.engine.moves import Move
from app.engine.reasons import N_, CardRef
from app.engine.ruleset import Ruleset, fail, refuse
from app.engine.state import Pile, State

_DEAL = Move("stock", "waste")
_PILES = 11
_DEALT = 121  # 11 rounds of 11


def run_length(pile: Pile) -> int:
    """How many top cards are face up and descend by one in one suit (I3)."""
    if not pile or pile[-1] < 0:
        return 0
    n, card = 1, pile[-1]
    for below in reversed(pile[:-1]):
        # Same suit, one rank higher: the face is exactly one more, unless ``card`` is a King.
        if below != card + 1 or rank_of(card) == KING:
            break
        n, card = n + 1, below
    return n


class QuadrupleInterchange(Ruleset):
    slug = "quadruple-interchange"
    name = "Quadruple Interchange"
    blurb = N_(
        "Four decks, 208 cards. Eleven deep piles hide every other card "
        "face down; runs in suit move together on the way to sixteen foundations."
    )
    table_note = N_(
        "Foundations build Ace to King in suit; piles build down in suit, "
        "and a run in suit moves together."
    )
    runs_move = True  # I3
    decks = 4
    layout = Layout(
        (
            PileSpec("stock", PileKind.STOCK, 0, 0),
            PileSpec("waste", PileKind.WASTE, 0, 1),
            *row_of(PileKind.FOUNDATION, "f", 8, 0, 3),
            *[PileSpec(f"f{9 + i}", PileKind.FOUNDATION, 1, 3 + i) for i in range(8)],
            *row_of(PileKind.TABLEAU, "t", _PILES, 2, 0, Fan.DOWN),
        ),
        rows=3,
        cols=11,
    )

    def _layout_deal(self, cards: list[int]) -> dict[str, Pile]:
        # Round i // 11 of the deal is face down when odd (I5 turns them up later).
        dealt = [c if (i // _PILES) % 2 == 0 else ~c for i, c in enumerate(cards[:_DEALT])]
        piles: dict[str, Pile] = {f"t{j + 1}": tuple(dealt[j::_PILES]) for j in range(_PILES)}
        piles.update({f"f{j + 1}": () for j in range(16)})
        piles["stock"] = tuple(reversed(cards[_DEALT:]))
        piles["waste"] = ()
        return piles

    def base_rank(self, state: State) -> int:
        return ACE

    def legal_moves(self, state: State) -> list[Move]:
        p, ids = state.piles, self.pile_ids
        moves = [_DEAL] if p[self.stock] else []
        # Card face that fits each non-full foundation / tableau top, and the empty piles.
        fits_foundation: dict[int, list[int]] = {}
        empty_foundations: list[int] = []
        for i in self.foundations:
            f = p[i]
            if not f:
                empty_foundations.append(i)
            elif rank_of(f[-1]) != KING:
                fits_foundation.setdefault(f[-1] + 1, []).append(i)
        fits_tableau: dict[int, list[int]] = {}
        empty_tableau: list[int] = []
        for i in self.tableau:
            t = p[i]
            if not t:
                empty_tableau.append(i)
            elif rank_of(t[-1]) != ACE:
                fits_tableau.setdefault(t[-1] - 1, []).append(i)

        def to_foundation(src: int, card: int) -> None:
            targets = empty_foundations if rank_of(card) == ACE else fits_foundation.get(card, ())
            moves.extend(Move(ids[src], ids[f]) for f in targets)

        waste = p[self.waste]
        if waste:
            card = waste[-1]
            to_foundation(self.waste, card)
            moves.extend(Move("waste", ids[t]) for t in fits_tableau.get(card, ()))
            moves.extend(Move("waste", ids[t]) for t in empty_tableau)
        for src in self.tableau:
            pile = p[src]
            run = run_length(pile)
            if not run:
                continue
            name = ids[src]
            to_foundation(src, pile[-1])
            for count in range(1, run + 1):
                bottom = pile[-count]
                moves.extend(Move(name, ids[t], count) for t in fits_tableau.get(bottom, ()))
                moves.extend(Move(name, ids[t], count) for t in empty_tableau)
        return moves

    def _play(self, piles: list[Pile], state: State, src: int, dst: int, count: int) -> bool:
        if src == self.stock:
            return self._deal_one(piles, src, dst, count)
        self._refuse_from_foundation(src)
        if dst == self.stock:
            fail(
                "stock_once_qi",
                N_("Cards never go back to the stock: Quadruple Interchange deals it only once."),
            )
        if dst == self.waste:
            fail("only_stock_to_waste", N_("Only the stock deals to the waste."))
        pile, target = piles[src], piles[dst]
        if src == self.waste and count != 1:
            fail("waste_top_only", N_("Only the top card of the waste can be played."))
        if pile[-count] < 0 or (count > 1 and run_length(pile) < count):
            if min(pile[-count:]) < 0:
                fail("face_down", N_("Face-down cards cannot be moved."))
            fail(
                "not_a_run",
                N_("Those %(count)s cards are not a run: a run descends by one in the same suit."),
                count=count,
            )
        bottom = pile[-count]
        if self.kind(dst) is PileKind.FOUNDATION:
            if count != 1:
                fail("foundation_one_at_a_time", N_("Cards go to a foundation one at a time."))
            why = up_in_suit_refusal(bottom, target, wrap=False, start=ACE)
            if why:
                refuse(why)
        elif target:
            top = target[-1]
            if suit_of(bottom) != suit_of(top) or rank_of(bottom) + 1 != rank_of(top):
                fail(
                    "tableau_down_no_wrap",
                    N_(
                        "%(card)s cannot go on %(top)s: the tableau builds down by one in suit "
                        "(a King never goes on an Ace)."
                    ),
                    card=CardRef(bottom),
                    top=CardRef(top),
                )
        rest = pile[:-count]
        revealed = bool(rest) and rest[-1] < 0
        if revealed:  # I5: the exposed card turns face up in the same step
            rest = (*rest[:-1], ~rest[-1])
        piles[src], piles[dst] = rest, target + pile[-count:]
        return revealed
