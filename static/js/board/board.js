// Patience Hall board: click, drag (mouse and touch), double-click / double-tap and keyboard
// (pointer.js, keys.js, play.js) fill in and send the one move form (send.js); what is legal,
// what the Deal button does, the clock's face and the preferences are the server's, sent in
// the page and in each answer (dom.js reads them). A spectator's page asks for the board by
// an htmx trigger on the status (hx-trigger="every 4s"), not from here.
import { say, table, w } from "./dom.js";
import { runClock } from "./clock.js";
import { onKeys } from "./keys.js";
import { onPointer } from "./pointer.js";
import { onAnswers } from "./send.js";

if (table) {
  let focusId = null;
  table.addEventListener("focusin", (e) => {
    if (e.target.classList.contains("pile")) focusId = e.target.id;
  });
  // After an answer, focus goes back to the pile it was on (a swapped pile loses it).
  onAnswers(() => {
    if (focusId && document.activeElement === document.body) {
      document.getElementById(focusId)?.focus({ preventScroll: true });
    }
  });
  onPointer();
  onKeys();
  runClock();

  // Forms that ask first (restart this deal).
  document.addEventListener("submit", (e) => {
    const question = e.target.dataset?.confirm;
    if (question && !window.confirm(question)) e.preventDefault();
  });

  // The share link: copied where the browser allows it, else shown to copy.
  document.addEventListener("click", (e) => {
    const link = e.target.closest("a[data-share]");
    if (!link) return;
    e.preventDefault();
    const url = new URL(link.getAttribute("href"), window.location.href).href;
    const done = () => say(w("Link to this deal copied: %(url)s", { url }));
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(done, () => window.location.assign(url));
    } else {
      window.prompt(w("Copy this link to share the deal:"), url);
    }
  });

  // A spectator's page skips its every-4-seconds ask while the tab is hidden.
  document.body.addEventListener("htmx:beforeRequest", (e) => {
    if (document.hidden && e.detail.elt.id === "game-status") e.preventDefault();
  });
}
