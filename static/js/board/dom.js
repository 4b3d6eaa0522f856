// Reading the board: the piles and cards on the page, and what the server says about them
// (the legal moves, what the Deal button does now), put into words for the announcement.
// The page's words for the scripts, in its language (app/web/pages/jswords.py).
const WORDS = JSON.parse(document.querySelector("meta[name=ph-words]")?.content || "{}");
export const w = (text, vars = {}) => (WORDS[text] || text).replace(/%\((\w+)\)s/g, (_, k) => vars[k]);

export const table = document.getElementById("table");
export const form = document.getElementById("move-form");
export const undoForm = document.querySelector("form.undo");
export const hintForm = document.querySelector("form.hint");
export const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
export const runs = table?.dataset.runs === "1";
export const playable = form !== null && !!table?.hasAttribute("data-play");

export const pileEl = (id) => document.getElementById("pile-" + id);
export const idOf = (el) => el.id.slice(5);
export const kindOf = (el) => el.classList[1];
export const cardsOf = (el) => Array.from(el.children);
export const statusEl = () => document.getElementById("game-status");
export const inPlay = () => !!statusEl()?.classList.contains("playing");
export const titleOf = (el) => el.getAttribute("aria-label").replace(/, \d+ cards?$/, "");

// The legal moves, as the server sends them: [from, to, count] each, with a fourth item
// "deal" for what the Deal button does now (a deal or the redeal), "trap" for a move after
// which no legal move is left.
export function legal() {
  const data = JSON.parse(statusEl()?.dataset.moves || "[]");
  return data.map(([from, to, count, note]) => ({ from, to, count, note }));
}
export const dealMove = () => legal().find((m) => m.note === "deal");

export function say(text, error = false) {
  const span = document.createElement("span");
  span.className = error ? "error" : "said";
  span.textContent = text;
  document.getElementById("announce").replaceChildren(span);
}

export function addToSaid(text) {
  const span = document.getElementById("announce").querySelector("span");
  if (span) span.textContent += " " + text;
  else say(text, true);
}

// How many cards a press on ``card`` picks up: the run from that card up, where runs move.
export function countFor(el, card) {
  const cards = cardsOf(el);
  if (!runs || !card || !el.classList.contains("fanned")) return 1;
  return cards.length - cards.indexOf(card);
}

export function names(el, count) {
  const cards = cardsOf(el).slice(-count);
  const first = cards[0].getAttribute("aria-label");
  return count === 1 ? first : w("%(count)s cards from %(first)s up", { count, first });
}
