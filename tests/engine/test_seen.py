"""What a game has seen (app/engine/seen.py), and the spectator's faces of a race.

The module reads what a game has seen off its state, on two claims about the five games: a
face-down card never moves, and before the first redeal the stock is the bottom of the stock as
dealt. Random playouts (with undos, as a player makes them) check both claims directly, and check
the result against what the game actually showed on the way, state by state:

- the seen slots only grow, and undo adds none;
- before any redeal, the faces of the slots a step newly shows are exactly the faces that
  appeared face up (no card turns face down, so nothing else changes the visible faces);
- a face shown face up now has at least as many seen slots as it shows copies;
- in the one-deck games, the seen slots' faces are exactly every face ever shown face up.

And for races of two or three racers on one deal: every face the spectator view shows has been
shown face up, at some moment, in every racer's game (an oracle of faces seen along each
playout, exact for one deck and necessary for two and four).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import GAMES, MAX_DEAL, Ruleset, ShownPile, State, get_ruleset
from app.engine.seen import only_faces, seen_slots, shared_faces, slot_faces

SLUGS = tuple(GAMES)
ONE_DECK = {slug for slug in SLUGS if GAMES[slug].cards == 52}
PLAYOUT = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RACES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def visible(rules: Ruleset, state: State) -> Counter[str]:
    out: Counter[str] = Counter()
    for pile in rules.public_view(state).values():
        out.update(c for c in pile.cards or () if c is not None)
    return out


def playout(rules: Ruleset, dealt: State, seed: int, length: int) -> list[State]:
    """States a player passes through: random legal moves, a greedy bias toward the
    foundations, and an undo now and then where undo is allowed (nothing revealed)."""
    rng = random.Random(seed)
    stack: list[tuple[State, bool]] = [(dealt, False)]  # (state, the step to it revealed)
    path = [dealt]
    for _ in range(length):
        state, revealed = stack[-1]
        if len(stack) > 1 and not revealed and rng.random() < 0.1:
            stack.pop()
            path.append(stack[-1][0])
            continue
        legal = rules.legal_moves(state)
        if not legal:
            break
        home = [m for m in legal if m.target.startswith("f")]
        move = rng.choice(home if home and rng.random() < 0.6 else legal)
        step = rules.step(state, move)
        stack.append((step.after, step.revealed))
        path.append(step.after)
    return path


@PLAYOUT
@given(
    slug=st.sampled_from(SLUGS),
    number=st.integers(1, MAX_DEAL),
    seed=st.integers(0, 2**32),
)
def test_seen_slots_follow_what_the_game_showed(slug: str, number: int, seed: int) -> None:
    rules = get_ruleset(slug)
    dealt = rules.deal(number)
    faces = slot_faces(dealt)
    path = playout(rules, dealt, seed, 250)
    shown_ever: set[str] = set()
    before = seen_slots(rules, dealt, dealt)
    for previous, state in zip([dealt, *path], path, strict=False):
        # The claims the module rests on.
        for pile, as_dealt in zip(state.piles, dealt.piles, strict=True):
            for depth, card in enumerate(pile):
                if card < 0:
                    assert as_dealt[depth] == card, "a face-down card moved"
        if rules.stock >= 0 and state.redeals == 0:
            stock = state.piles[rules.stock]
            assert stock == dealt.piles[rules.stock][: len(stock)], "the stock changed order"
        now = seen_slots(rules, dealt, state)
        assert before <= now, "a game un-saw a card"
        shows = visible(rules, state)
        shown_ever.update(shows)
        seen_faces = Counter(faces[s] for s in now)
        assert all(seen_faces[c] >= n for c, n in shows.items()), "a face shown but not seen"
        if state.redeals == 0 and previous.redeals == 0:
            gained = shows - visible(rules, previous)
            lost = visible(rules, previous) - shows
            new = Counter(faces[s] for s in now - before)
            assert not lost, f"a face turned face down: {lost}"
            assert gained == new, (gained, new)
        before = now
    if slug in ONE_DECK:
        assert {faces[s] for s in before} == shown_ever


def test_a_deal_shows_what_lies_face_up() -> None:
    for slug in SLUGS:
        rules = get_ruleset(slug)
        dealt = rules.deal(7)
        seen = seen_slots(rules, dealt, dealt)
        faces = slot_faces(dealt)
        assert Counter(faces[s] for s in seen) == visible(rules, dealt)


@RACES
@given(
    slug=st.sampled_from(SLUGS),
    number=st.integers(1, MAX_DEAL),
    seeds=st.lists(st.integers(0, 2**32), min_size=2, max_size=3),
    lengths=st.lists(st.integers(0, 300), min_size=3, max_size=3),
)
def test_the_spectator_sees_only_what_every_racer_has_seen(
    slug: str, number: int, seeds: list[int], lengths: list[int]
) -> None:
    rules = get_ruleset(slug)
    dealt = rules.deal(number)
    faces = slot_faces(dealt)
    paths = [playout(rules, dealt, seed, n) for seed, n in zip(seeds, lengths, strict=False)]
    ever = [set().union(*(visible(rules, s) for s in path)) for path in paths]
    seen = [seen_slots(rules, dealt, path[-1]) for path in paths]
    for watched, path in zip(seen, paths, strict=True):
        allowed = shared_faces(faces, watched, seen)
        view = only_faces(rules.public_view(path[-1]), allowed)
        for pid, pile in view.items():
            cards = pile.cards
            if cards is None:
                assert pid == "stock"
                continue
            public = rules.public_view(path[-1])[pid].cards
            assert public is not None and len(cards) == len(public) == pile.count
            for card, real in zip(cards, public, strict=True):
                assert card is None or card == real
                if card is not None:
                    assert all(card in racer for racer in ever), f"{card} unseen by a racer"
                    copies = {s for s in watched if faces[s] == card}
                    assert all(copies <= racer for racer in seen)


def test_a_card_only_one_racer_has_dealt_stays_face_down() -> None:
    rules = get_ruleset("corners")
    dealt = rules.deal(11)
    leader = rules.step(dealt, rules.deal_move(dealt)).after  # one card dealt to the waste
    seen = [seen_slots(rules, dealt, leader), seen_slots(rules, dealt, dealt)]
    view = only_faces(rules.public_view(leader), shared_faces(slot_faces(dealt), seen[0], seen))
    assert view["waste"] == ShownPile((None,), 1)
    assert view["stock"] == rules.public_view(leader)["stock"]
    # Once the trailing racer has dealt it too, it shows.
    both = [seen[0], seen[0]]
    view = only_faces(rules.public_view(leader), shared_faces(slot_faces(dealt), seen[0], both))
    assert view["waste"] == rules.public_view(leader)["waste"]
