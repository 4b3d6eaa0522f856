// Picking up cards and putting them back: the picked cards and the piles they may go to (the
// server's legal moves) are marked, and the announcement says so.
import { cardsOf, idOf, kindOf, legal, names, pileEl, say, table, titleOf, w } from "./dom.js";

export const hand = { picked: null }; // picked: {pile, count}

export function clearMarks() {
  for (const el of table.querySelectorAll(".picked, .target, .hover, .dragging")) {
    el.classList.remove("picked", "target", "hover", "dragging");
  }
}

export function cancel(quiet = false) {
  if (hand.picked && !quiet) say(w("Put back."));
  hand.picked = null;
  clearMarks();
}

export function destinations(from, count) {
  return legal()
    .filter((m) => m.from === from && (m.count === count || kindOf(pileEl(m.to)) === "stock"))
    .map((m) => m.to);
}

export function pick(el, count, quiet = false) {
  clearMarks();
  hand.picked = null;
  const cards = cardsOf(el);
  if (kindOf(el) === "stock") return false;
  if (!cards.length) {
    if (!quiet) say(w("%(pile)s is empty.", { pile: titleOf(el) }));
    return false;
  }
  count = Math.min(count, cards.length);
  if (cards[cards.length - count].classList.contains("b")) {
    if (!quiet) say(w("Face-down cards cannot be moved."), true);
    return false;
  }
  hand.picked = { pile: idOf(el), count };
  cards.slice(-count).forEach((c) => c.classList.add("picked"));
  const targets = destinations(hand.picked.pile, count);
  targets.forEach((t) => pileEl(t)?.classList.add("target"));
  if (!quiet) {
    const where = targets.length
      ? w("It can go to %(piles)s.", { piles: targets.map((t) => titleOf(pileEl(t))).join(", ") })
      : w("It has no legal move now.");
    say(w("Picked up %(cards)s. %(where)s", { cards: names(el, count), where }));
  }
  return true;
}
