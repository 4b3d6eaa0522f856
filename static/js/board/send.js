// Sending actions. Every way of moving fills in and submits the one move form; htmx sends it
// and swaps in the piles the server says changed. Cards move on the page only once the server
// has answered, but no input is lost meanwhile: actions wait in a queue, sent one at a time in
// order, each with the version the server has just given. A refused action says why (the
// server restores the board) and the actions queued after it are dropped, with a word saying so.
import { addToSaid, cardsOf, dealMove, form, inPlay, legal, names, pileEl, playable, say, statusEl, table, titleOf, undoForm, w } from "./dom.js";
import { beep, clearPanel, slideIn } from "./effects.js";
import { hand, clearMarks, cancel, pick } from "./pick.js";
import { startClock } from "./clock.js";

const queue = []; // actions waiting to be sent: {kind: "move", from, to, count, origin}, {kind: "deal"} or {kind: "undo"}
let inflight = null; // the action sent and not yet answered
let flight = null; // where moved cards came from, to slide them into place
const trapDialog = document.getElementById("trap-dialog");
// The Deal button's value: the server turns it into a deal or a redeal.
const dealField = form && Object.assign(document.createElement("input"), { type: "hidden", name: "move" });
if (dealField) {
  form.append(dealField);
  form.noValidate = true; // a deal names no pile; the server checks every action and says why
}

export const busy = () => inflight !== null || queue.length > 0;

export function submit(from, to, count, origin) {
  if (!playable) return;
  hand.picked = null;
  clearMarks();
  const d = dealMove();
  if (d && d.from === from && d.to === to) {
    // The waste dropped on the stock: what the Deal button does now (the redeal).
    enqueue({ kind: "deal", origin });
    return;
  }
  const action = { kind: "move", from, to, count, origin };
  // Castle's End: a base choice after which no legal move is left is asked about first (every
  // card is face up, so the warning gives nothing away).
  const trap = legal().some((m) => m.note === "trap" && m.from === from && m.to === to);
  if (!busy() && trapDialog && trap) {
    document.getElementById("trap-text").textContent = w(
      "After %(card)s goes to %(pile)s, no legal move is left. You could still undo it.",
      { card: names(pileEl(from), 1), pile: titleOf(pileEl(to)) },
    );
    trapDialog.returnValue = "";
    trapDialog.addEventListener(
      "close",
      () => {
        if (trapDialog.returnValue === "play") enqueue(action);
        else say(w("Put back."));
      },
      { once: true },
    );
    trapDialog.showModal();
    return;
  }
  enqueue(action);
}

function enqueue(action) {
  queue.push(action);
  table.dataset.queued = String(queue.length + (inflight ? 1 : 0));
  pump();
}

// Sends the next queued action once the previous one has been answered, so that it carries
// the version the server has just given.
function pump() {
  if (inflight || !queue.length) return;
  if (!inPlay()) {
    queue.length = 0;
    return;
  }
  const a = queue.shift();
  inflight = a;
  table.classList.add("busy");
  if (a.kind === "undo") {
    undoForm.requestSubmit();
    return;
  }
  let move = a;
  if (a.kind === "deal") {
    // What the Deal button does on the board as it is after the earlier actions, as the
    // server said; the server decides again on its own.
    move = dealMove() || { to: "", count: 0 };
    a.origin ||= pileEl(move.from)?.getBoundingClientRect();
  }
  const source = move.from && pileEl(move.from);
  const cards = source ? cardsOf(source).slice(-move.count) : [];
  flight = { to: move.to, count: move.count, rect: a.origin || cards[0]?.getBoundingClientRect() };
  dealField.value = a.kind === "deal" ? "deal" : "";
  form.elements.from.value = a.kind === "deal" ? "" : a.from;
  form.elements.to.value = a.kind === "deal" ? "" : a.to;
  form.elements.count.value = String(a.kind === "deal" ? 1 : a.count);
  form.requestSubmit();
}

export function deal() {
  if (!playable || !pileEl("stock")) return;
  cancel(true);
  enqueue({ kind: "deal" });
}

export function undo() {
  const button = undoForm?.querySelector("button");
  if (!button) return;
  // While actions are on their way the button may not be up to date: the server decides.
  if (button.getAttribute("aria-disabled") === "true" && !busy()) {
    say(statusEl()?.dataset.undoWhy || "There is no move you can take back now.", true);
    return;
  }
  cancel(true);
  enqueue({ kind: "undo" });
}

function syncControls() {
  const button = undoForm?.querySelector("button");
  if (button) {
    const off = statusEl()?.dataset.undo !== "1" || !inPlay();
    if (off) {
      button.setAttribute("aria-disabled", "true");
      button.title = statusEl()?.dataset.undoWhy || "";
    } else {
      button.removeAttribute("aria-disabled");
      button.removeAttribute("title");
    }
  }
  startClock();
}

export function onAnswers(focused) {
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const from = e.detail.elt;
    if (!(from instanceof HTMLFormElement)) return;
    const mine = inflight !== null && (from === form || from === undoForm);
    const status = e.detail.xhr ? e.detail.xhr.status : 0;
    const ok = e.detail.successful && status === 200;
    if (ok && from === form) slideIn(flight);
    flight = null;
    if (status === 0) {
      say(w("The server could not be reached: nothing was moved. Try again."), true);
    } else if (status >= 400 && ![409, 422, 429].includes(status)) {
      say(w("That did not work: please reload the page."), true);
    }
    if (from === form || from === undoForm) beep(ok);
    if (mine) {
      inflight = null;
      if (!ok && queue.length) {
        const n = queue.length;
        queue.length = 0;
        addToSaid(
          n === 1
            ? w("The action you made after it was not sent.")
            : w("The %(n)s actions you made after it were not sent.", { n }),
        );
      }
    }
    if (from === form) {
      form.elements.from.value = "";
      form.elements.to.value = "";
      form.elements.count.value = "1";
      dealField.value = "";
    }
    // A card picked while the server was answering stays picked, if it is still there.
    const kept = hand.picked;
    hand.picked = null;
    clearMarks();
    if (kept && inPlay()) {
      const el = pileEl(kept.pile);
      if (el) pick(el, kept.count, true);
    }
    syncControls();
    clearPanel();
    focused();
    table.dataset.queued = String(queue.length);
    if (!busy()) table.classList.remove("busy");
    // The next action goes once htmx has finished with this request (a request started from
    // inside its own afterRequest handler can be dropped).
    setTimeout(pump, 0);
  });
}
