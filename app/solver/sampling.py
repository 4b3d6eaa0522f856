"""What the player can see of a position, and arrangements of what they cannot: the hidden
cards (face-down ones, and the stock while it has not been turned over) put back in a fixed
order, and orders of them drawn from a generator seeded from the visible position only, so
that equal views give equal arrangements whatever the real order."""

from __future__ import annotations

import hashlib

from app.engine import State, dumps, get_ruleset


def stock_hidden(state: State) -> bool:
    rules = get_ruleset(state.game)
    return rules.stock >= 0 and bool(state.piles[rules.stock]) and state.redeals == 0


def fully_visible(state: State) -> bool:
    """True when the player has seen every card of the position where it now lies."""
    if any(c < 0 for pile in state.piles for c in pile):
        return False
    return not stock_hidden(state)


def visible_only(state: State) -> State:
    """``state`` with its hidden cards (face-down ones, and the stock while it is hidden) put
    back in a fixed order: sorted, face-down places first in pile order, then the stock.

    Which cards are hidden is known to the player (every card not in sight); where each one
    lies is not. Anything computed from this state depends only on what the player sees.
    """
    rules = get_ruleset(state.game)
    hide_stock = stock_hidden(state)
    hidden = sorted(
        [~c for pile in state.piles for c in pile if c < 0]
        + (list(state.piles[rules.stock]) if hide_stock else [])
    )
    it = iter(hidden)
    piles: list[tuple[int, ...]] = []
    for i, pile in enumerate(state.piles):
        if i == rules.stock and hide_stock:
            piles.append(pile)  # filled below, after every face-down place
        else:
            piles.append(tuple(~next(it) if c < 0 else c for c in pile))
    if hide_stock:
        piles[rules.stock] = tuple(it)
    return State(state.game, tuple(piles), state.redeals)


def sample_seed(masked: State) -> bytes:
    """The sampler's seed: a digest of the visible position (hidden cards in a fixed order)."""
    return hashlib.sha256(dumps(masked).encode()).digest()


class _Stream:
    """A deterministic stream of numbers from a seed, as the deals draw theirs (rules.md §1):
    block i is SHA-256(seed ‖ i); each draw takes 8 bytes; ``below`` rejects to stay uniform.
    (The solver uses no global or library randomness.)"""

    def __init__(self, seed: bytes) -> None:
        self.seed, self.block, self.buffer = seed, 0, b""

    def _u64(self) -> int:
        if len(self.buffer) < 8:
            self.buffer += hashlib.sha256(self.seed + self.block.to_bytes(8, "big")).digest()
            self.block += 1
        value, self.buffer = int.from_bytes(self.buffer[:8], "big"), self.buffer[8:]
        return value

    def below(self, m: int) -> int:
        limit = 2**64 - (2**64 % m)
        while True:
            u = self._u64()
            if u < limit:
                return u % m

    def shuffle(self, items: list[int]) -> None:
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def arrangements(state: State, count: int) -> list[State]:
    """``count`` arrangements of ``state``'s hidden cards, each consistent with what the player
    has seen (the same cards hidden in the same places, in another order), drawn from the
    visible position only: equal views give equal arrangements, whatever the real order."""
    rules = get_ruleset(state.game)
    masked = visible_only(state)
    hide_stock = stock_hidden(state)
    hidden = [~c for pile in masked.piles for c in pile if c < 0]
    if hide_stock:
        hidden += list(masked.piles[rules.stock])
    rng = _Stream(sample_seed(masked))
    out: list[State] = []
    for _ in range(count):
        order = hidden[:]
        rng.shuffle(order)
        it = iter(order)
        piles: list[tuple[int, ...]] = []
        for i, pile in enumerate(masked.piles):
            if i == rules.stock and hide_stock:
                piles.append(())  # filled below, after every face-down place
            else:
                piles.append(tuple(~next(it) if c < 0 else c for c in pile))
        if hide_stock:
            piles[rules.stock] = tuple(it)
        out.append(State(state.game, tuple(piles), state.redeals))
    return out
