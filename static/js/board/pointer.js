// The pointer: click, double-click and drag, with a mouse, a pen or a finger alike. A press
// that moves more than a few pixels drags a copy of the cards (a ghost); where it is let go
// decides the pile. A table wider than the screen scrolls while a card is held near its edge.
import { cardsOf, countFor, idOf, inPlay, kindOf, names, pileEl, playable, say, table, w } from "./dom.js";
import { cancel, hand, pick } from "./pick.js";
import { drop, tap } from "./play.js";

let press = null; // a pointer pressed on the table: {el, card, x, y, id}
let drag = null; // {ghost, dx, dy, over}

function startDrag(p) {
  const { el, card } = p;
  if (!card || card.classList.contains("b") || kindOf(el) === "stock") return null;
  const count = countFor(el, card);
  if (!pick(el, count, true)) return null;
  const moving = cardsOf(el).slice(-count);
  const first = moving[0].getBoundingClientRect();
  const ghost = document.createElement("ol");
  ghost.className = "ghost";
  ghost.setAttribute("aria-hidden", "true");
  const style = getComputedStyle(table);
  for (const v of ["--card-w", "--card-h", "--fs", "--strip"]) {
    ghost.style.setProperty(v, style.getPropertyValue(v));
  }
  for (const c of moving) {
    const copy = c.cloneNode(true);
    copy.classList.remove("picked");
    copy.removeAttribute("aria-label");
    ghost.append(copy);
    c.classList.add("dragging");
  }
  ghost.style.left = first.left + "px";
  ghost.style.top = first.top + "px";
  document.body.append(ghost);
  return { ghost, dx: p.x - first.left, dy: p.y - first.top, over: null };
}

// The pile the dragged cards overlap most (not the one they came from).
function pileUnder(ghost) {
  const g = ghost.firstElementChild.getBoundingClientRect();
  let best = null;
  let most = 0;
  for (const el of table.querySelectorAll(".pile")) {
    if (hand.picked && idOf(el) === hand.picked.pile) continue;
    const r = el.getBoundingClientRect();
    const w = Math.min(g.right, r.right) - Math.max(g.left, r.left);
    const h = Math.min(g.bottom, r.bottom) - Math.max(g.top, r.top);
    if (w > 0 && h > 0 && w * h > most) {
      most = w * h;
      best = el;
    }
  }
  return best;
}

// A table wider than the screen (the big tables on a phone) scrolls while a dragged card is
// held near its left or right edge, so every pile can be reached in one drag.
const scroller = table?.closest(".board-wrap");
function edgeScroll(x) {
  if (!scroller || scroller.scrollWidth <= scroller.clientWidth) return;
  const r = scroller.getBoundingClientRect();
  const edge = Math.min(36, r.width / 8);
  if (x < r.left + edge) scroller.scrollLeft -= 14;
  else if (x > r.right - edge) scroller.scrollLeft += 14;
}

export function onPointer() {
  table.addEventListener("pointerdown", (e) => {
    if (!playable || !inPlay() || (e.pointerType === "mouse" && e.button !== 0)) return;
    const el = e.target.closest(".pile");
    if (!el) return;
    const card = e.target.closest(".pile > li");
    press = { el, card, x: e.clientX, y: e.clientY, id: e.pointerId };
  });

  window.addEventListener(
    "pointermove",
    (e) => {
      if (!press || e.pointerId !== press.id) return;
      if (!drag) {
        if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < 6) return;
        drag = startDrag(press);
        if (!drag) {
          press = null;
          return;
        }
      }
      e.preventDefault();
      edgeScroll(e.clientX);
      drag.ghost.style.left = e.clientX - drag.dx + "px";
      drag.ghost.style.top = e.clientY - drag.dy + "px";
      const over = pileUnder(drag.ghost);
      if (over !== drag.over) {
        drag.over?.classList.remove("hover");
        over?.classList.add("hover");
        drag.over = over;
      }
    },
    { passive: false },
  );

  window.addEventListener("pointerup", (e) => {
    if (!press || e.pointerId !== press.id) return;
    const p = press;
    press = null;
    if (!drag) {
      tap(p.el, p.card, e.clientX, e.clientY);
      return;
    }
    const { ghost } = drag;
    const over = pileUnder(ghost);
    const origin = ghost.firstElementChild.getBoundingClientRect();
    ghost.remove();
    drag = null;
    if (over && hand.picked) {
      drop(over, origin);
    } else if (hand.picked) {
      // A drag that cannot land says why, and the card goes back.
      const what = names(pileEl(hand.picked.pile), hand.picked.count);
      cancel(true);
      say(w("%(cards)s was dropped off the piles: it is back where it was. Drop it on a pile.", { cards: what }), true);
    }
  });

  window.addEventListener("pointercancel", () => {
    press = null;
    if (drag) {
      drag.ghost.remove();
      drag = null;
      cancel(true);
      say(w("The browser took that drag for a scroll: the card is back. Try again from the card's face."), true);
    }
  });
}
