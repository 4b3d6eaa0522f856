// The keyboard and the buttons: arrows move between piles, Enter or Space picks and drops,
// F sends to a foundation, D deals, U or Ctrl+Z undoes, H asks for a hint, Esc puts back,
// ? shows the sheet of shortcuts; the Deal, Undo and Keyboard shortcuts buttons.
import { hintForm, inPlay, playable, table } from "./dom.js";
import { cancel } from "./pick.js";
import { dealNow, keyPick, toFoundation } from "./play.js";
import { busy, undo } from "./send.js";

// The pile whose centre lies nearest in the arrow's direction (straight ahead counts most).
function focusToward(el, key) {
  const here = el.getBoundingClientRect();
  const cardH = parseFloat(getComputedStyle(table).getPropertyValue("--card-h")) || 80;
  const spot = (r) => ({ x: r.left + r.width / 2, y: r.top + Math.min(r.height, cardH) / 2 });
  const a = spot(here);
  let best = null;
  let score = Infinity;
  for (const other of table.querySelectorAll(".pile")) {
    if (other === el) continue;
    const b = spot(other.getBoundingClientRect());
    const dx = b.x - a.x;
    const dy = b.y - a.y;
    const [along, across] =
      key === "ArrowRight" ? [dx, dy] : key === "ArrowLeft" ? [-dx, dy]
        : key === "ArrowDown" ? [dy, dx] : [-dy, dx];
    if (along <= 1) continue;
    const s = along + 2.5 * Math.abs(across);
    if (s < score) {
      score = s;
      best = other;
    }
  }
  best?.focus();
}

// Typing goes to text fields; a ticked checkbox or a pressed button keeps the shortcuts.
const TYPING = "input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]), select, textarea";

export function onKeys() {
  const keysDialog = document.getElementById("keys-dialog");

  table.addEventListener("keydown", (e) => {
    const el = e.target.closest(".pile");
    if (!el || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key.startsWith("Arrow")) {
      e.preventDefault();
      focusToward(el, e.key);
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      keyPick(el);
    } else if (e.key === "f" || e.key === "F") {
      e.preventDefault();
      if (playable && inPlay()) toFoundation(el);
    }
  });

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.metaKey || e.target.closest(TYPING) || e.target.closest("dialog")) return;
    if (e.key === "?" && keysDialog) {
      e.preventDefault();
      keysDialog.showModal();
      return;
    }
    if (e.ctrlKey) {
      if (e.key === "z" && playable && !e.repeat) {
        e.preventDefault();
        undo();
      }
      return;
    }
    if (e.key === "Escape") cancel();
    else if ((e.key === "d" || e.key === "D") && playable) dealNow();
    else if ((e.key === "u" || e.key === "U") && playable && !e.repeat) undo(); // a held key: once
    else if ((e.key === "h" || e.key === "H") && playable && hintForm && !busy()) hintForm.requestSubmit();
  });

  document.addEventListener("click", (e) => {
    const button = e.target.closest("[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "deal") {
      e.preventDefault();
      dealNow();
    } else if (action === "undo" && playable) {
      e.preventDefault();
      // The second click of a double click is the same press: it takes back one move.
      if (e.detail < 2) undo();
    } else if (action === "keys" && keysDialog) {
      keysDialog.showModal();
    }
  });
}
