// What a tap, a double tap, a key or a drop means on the board: pick, drop, deal, or send a
// card to a foundation. The legality of a move is the server's (the marks come from its list).
import { cardsOf, countFor, idOf, inPlay, kindOf, legal, names, pileEl, playable, runs, say, titleOf, w } from "./dom.js";
import { cancel, hand, pick } from "./pick.js";
import { deal, submit } from "./send.js";

let lastTap = null; // {pile, card, time, x, y}
export const forgetTap = () => (lastTap = null);

export function drop(el, origin) {
  const { pile, count } = hand.picked;
  lastTap = null;
  submit(pile, idOf(el), count, origin);
}

export function dealNow() {
  lastTap = null;
  deal();
}

// Send the top card of ``el`` to a foundation it fits. Where it fits several foundations
// that are not alike (Patriarchs' Ace and King piles), the player chooses.
export function toFoundation(el) {
  const id = idOf(el);
  const fits = legal().filter((m) => m.from === id && m.count === 1 && kindOf(pileEl(m.to)) === "foundation");
  if (!fits.length) {
    const cards = cardsOf(el);
    say(
      cards.length
        ? w("No foundation takes %(card)s now.", { card: names(el, 1) })
        : w("%(pile)s is empty.", { pile: titleOf(el) }),
      true,
    );
    return;
  }
  const look = (m) => {
    const t = pileEl(m.to);
    const top = t.lastElementChild;
    return `${t.dataset.count}:${top ? top.getAttribute("aria-label") : ""}`;
  };
  if (new Set(fits.map(look)).size === 1) {
    lastTap = null;
    submit(id, fits[0].to, 1);
  } else if (pick(el, 1, true)) say(w("%(card)s fits more than one foundation: choose one.", { card: names(el, 1) }));
}

// A tap or click (not a drag) on a pile, with the card under the pointer if any.
// A double-click or double-tap: the second press on the same card, close in time and place.
// (Two separate clicks on one pile, such as picking a card and putting it back, are not.)
export function tap(el, card, x, y) {
  if (!playable || !inPlay()) return;
  const id = idOf(el);
  const now = Date.now();
  const double =
    lastTap && lastTap.pile === id && lastTap.card === card && now - lastTap.time < 500 &&
    Math.hypot(x - lastTap.x, y - lastTap.y) < 16;
  lastTap = { pile: id, card, time: now, x, y };
  if (double && kindOf(el) !== "stock") {
    lastTap = null;
    cancel(true);
    toFoundation(el);
    return;
  }
  if (kindOf(el) === "stock" && !hand.picked) {
    dealNow();
    return;
  }
  if (hand.picked) {
    if (hand.picked.pile !== id) {
      drop(el);
      return;
    }
    const count = countFor(el, card);
    if (count !== hand.picked.count && card && !card.classList.contains("b")) pick(el, count);
    else cancel();
    return;
  }
  pick(el, countFor(el, card));
}

// Enter or Space on a pile: pick up its top card, or drop the picked cards on it.
export function keyPick(el) {
  if (!playable || !inPlay()) return;
  const id = idOf(el);
  if (hand.picked && hand.picked.pile !== id) {
    drop(el);
    return;
  }
  if (hand.picked) {
    // Where runs move, each press takes one card more, as long as it is face up.
    const cards = cardsOf(el);
    const next = hand.picked.count + 1;
    if (runs && next <= cards.length && !cards[cards.length - next].classList.contains("b")) {
      pick(el, next);
    } else cancel();
    return;
  }
  if (kindOf(el) === "stock") dealNow();
  else pick(el, 1);
}
