// Patience Hall board: click, drag (mouse and touch), double-click / double-tap and keyboard.
// Every way of moving fills in and submits the one move form; htmx sends it and swaps in the
// piles the server says changed. Cards move on the page only once the server has answered, but
// no input is lost meanwhile: picking works at once, and actions wait in a queue, sent one at a
// time in order. A refused action says why (the server restores the board) and the actions
// queued after it are dropped, with a word saying so.
(() => {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  const WORDS = JSON.parse(document.querySelector("meta[name=ph-words]")?.content || "{}");
  const w = (text, vars = {}) => (WORDS[text] || text).replace(/%\((\w+)\)s/g, (_, k) => vars[k]);
  const table = document.getElementById("table");
  if (!table) return;
  const form = document.getElementById("move-form");
  const announcer = document.getElementById("announce");
  const undoForm = document.querySelector("form.undo");
  const hintForm = document.querySelector("form.hint");
  const reduced = window.matchMedia("(prefers-reduced-motion: reduce)");
  const runs = table.dataset.runs === "1";
  const playable = form !== null && table.hasAttribute("data-play");

  let picked = null; // {pile, count}
  const queue = []; // actions waiting to be sent: {kind: "move", from, to, count} or {kind: "undo"}
  let inflight = null; // the action sent and not yet answered
  let press = null; // a pointer pressed on the table
  let drag = null; // {ghost, dx, dy, over}
  let lastTap = null; // {pile, time}
  let flight = null; // where moved cards came from, to slide them into place
  let focusId = null;

  // -- reading the board -------------------------------------------------------------------

  const pileEl = (id) => document.getElementById("pile-" + id);
  const idOf = (el) => el.id.slice(5);
  const kindOf = (el) => el.classList[1];
  const cardsOf = (el) => Array.from(el.children);
  const statusEl = () => document.getElementById("game-status");
  const inPlay = () => statusEl()?.classList.contains("playing");
  const titleOf = (el) => el.getAttribute("aria-label").replace(/, \d+ cards?$/, "");

  function legal() {
    const text = statusEl()?.dataset.legal || "";
    return text.split(" ").filter(Boolean).map((m) => {
      const [, from, to, n] = /^([a-z0-9]+)-([a-z0-9]+)(?:\/(\d+))?$/.exec(m);
      return { from, to, count: Number(n || 1) };
    });
  }

  function say(text, error = false) {
    const span = document.createElement("span");
    span.className = error ? "error" : "said";
    span.textContent = text;
    announcer.replaceChildren(span);
  }

  // How many cards a press on ``card`` picks up: the run from that card up, where runs move.
  function countFor(el, card) {
    const cards = cardsOf(el);
    if (!runs || !card || !el.classList.contains("fanned")) return 1;
    return cards.length - cards.indexOf(card);
  }

  function names(el, count) {
    const cards = cardsOf(el).slice(-count);
    const first = cards[0].getAttribute("aria-label");
    return count === 1 ? first : w("%(count)s cards from %(first)s up", { count, first });
  }

  // -- picking and dropping ----------------------------------------------------------------

  function clearMarks() {
    for (const el of table.querySelectorAll(".picked, .target, .hover, .dragging")) {
      el.classList.remove("picked", "target", "hover", "dragging");
    }
  }

  function cancel(quiet = false) {
    if (picked && !quiet) say(w("Put back."));
    picked = null;
    clearMarks();
  }

  function pick(el, count, quiet = false) {
    clearMarks();
    picked = null;
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
    picked = { pile: idOf(el), count };
    cards.slice(-count).forEach((c) => c.classList.add("picked"));
    const targets = destinations(picked.pile, count);
    targets.forEach((t) => pileEl(t)?.classList.add("target"));
    if (!quiet) {
      const where = targets.length
        ? w("It can go to %(piles)s.", { piles: targets.map((t) => titleOf(pileEl(t))).join(", ") })
        : w("It has no legal move now.");
      say(w("Picked up %(cards)s. %(where)s", { cards: names(el, count), where }));
    }
    return true;
  }

  function destinations(from, count) {
    return legal()
      .filter((m) => m.from === from && (m.count === count || m.to === "stock"))
      .map((m) => m.to);
  }

  const traps = () => (statusEl()?.dataset.traps || "").split(" ").filter(Boolean);
  const trapDialog = document.getElementById("trap-dialog");

  function submit(from, to, count, origin) {
    if (!playable) return;
    picked = null;
    clearMarks();
    lastTap = null;
    const action = { kind: "move", from, to, count, origin };
    // Castle's End: a base choice after which no legal move is left is asked about first (every
    // card is face up, so the warning gives nothing away).
    const text = `${from}-${to}`;
    if (!inflight && !queue.length && trapDialog && traps().includes(text)) {
      const source = pileEl(from);
      document.getElementById("trap-text").textContent =
        w("After %(card)s goes to %(pile)s, no legal move is left. You could still undo it.", {
          card: names(source, 1),
          pile: titleOf(pileEl(to)),
        });
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
    if (a.kind === "deal") {
      // Deal or redeal is decided now, on the board as it is after the earlier actions.
      const redeal = legal().find((m) => m.from === "waste" && m.to === "stock");
      const waste = pileEl("waste");
      Object.assign(a, redeal
        ? { from: "waste", to: "stock", count: redeal.count, origin: waste.getBoundingClientRect() }
        : { from: "stock", to: "waste", count: 1, origin: pileEl("stock").getBoundingClientRect() });
    }
    if (a.from === "waste" && a.to === "stock") a.count = Number(pileEl("waste").dataset.count);
    const source = pileEl(a.from);
    const cards = source ? cardsOf(source).slice(-a.count) : [];
    flight = { to: a.to, count: a.count, rect: a.origin || (cards[0] && cards[0].getBoundingClientRect()) };
    form.elements.from.value = a.from;
    form.elements.to.value = a.to;
    form.elements.count.value = String(a.count);
    form.requestSubmit();
  }

  function drop(el) {
    const { pile, count } = picked;
    submit(pile, idOf(el), count);
  }

  function deal() {
    if (!playable || !pileEl("stock")) return;
    cancel(true);
    lastTap = null;
    enqueue({ kind: "deal" });
  }

  // Send the top card of ``el`` to a foundation it fits. Where it fits several foundations
  // that are not alike (Patriarchs' Ace and King piles), the player chooses.
  function toFoundation(el) {
    const id = idOf(el);
    const fits = legal().filter(
      (m) => m.from === id && m.count === 1 && kindOf(pileEl(m.to)) === "foundation",
    );
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
    if (new Set(fits.map(look)).size === 1) submit(id, fits[0].to, 1);
    else if (pick(el, 1, true)) {
      say(w("%(card)s fits more than one foundation: choose one.", { card: names(el, 1) }));
    }
  }

  // A tap or click (not a drag) on a pile, with the card under the pointer if any.
  // A double-click or double-tap: the second press on the same card, close in time and place.
  // (Two separate clicks on one pile, such as picking a card and putting it back, are not.)
  function tap(el, card, x, y) {
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
    if (kindOf(el) === "stock" && !picked) {
      deal();
      return;
    }
    if (picked) {
      if (picked.pile !== id) {
        drop(el);
        return;
      }
      const count = countFor(el, card);
      if (count !== picked.count && card && !card.classList.contains("b")) pick(el, count);
      else cancel();
      return;
    }
    pick(el, countFor(el, card));
  }

  // -- pointer: click, double-click, drag (mouse, pen and touch alike) -----------------------

  table.addEventListener("pointerdown", (e) => {
    if (!playable || !inPlay() || (e.pointerType === "mouse" && e.button !== 0)) return;
    const el = e.target.closest(".pile");
    if (!el) return;
    const card = e.target.closest(".pile > li");
    press = { el, card, x: e.clientX, y: e.clientY, id: e.pointerId };
  });

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

  function pileUnder(ghost) {
    const g = ghost.firstElementChild.getBoundingClientRect();
    let best = null;
    let most = 0;
    for (const el of table.querySelectorAll(".pile")) {
      if (picked && idOf(el) === picked.pile) continue;
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
  const scroller = table.closest(".board-wrap");
  function edgeScroll(x) {
    if (!scroller || scroller.scrollWidth <= scroller.clientWidth) return;
    const r = scroller.getBoundingClientRect();
    const edge = Math.min(36, r.width / 8);
    if (x < r.left + edge) scroller.scrollLeft -= 14;
    else if (x > r.right - edge) scroller.scrollLeft += 14;
  }

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
    if (over && picked) {
      submit(picked.pile, idOf(over), picked.count, origin);
    } else if (picked) {
      // A drag that cannot land says why, and the card goes back.
      const what = names(pileEl(picked.pile), picked.count);
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

  // -- keyboard ------------------------------------------------------------------------------

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

  function keyPick(el) {
    if (!playable || !inPlay()) return;
    const id = idOf(el);
    if (picked && picked.pile !== id) {
      drop(el);
      return;
    }
    if (picked) {
      // Where runs move, each press takes one card more, as long as it is face up.
      const cards = cardsOf(el);
      const next = picked.count + 1;
      if (runs && next <= cards.length && !cards[cards.length - next].classList.contains("b")) {
        pick(el, next);
      } else cancel();
      return;
    }
    if (kindOf(el) === "stock") deal();
    else pick(el, 1);
  }

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

  function undo() {
    const button = undoForm?.querySelector("button");
    if (!button) return;
    // While actions are on their way the button may not be up to date: the server decides.
    if (button.getAttribute("aria-disabled") === "true" && !inflight && !queue.length) {
      say(statusEl()?.dataset.undoWhy || "There is no move you can take back now.", true);
      return;
    }
    cancel(true);
    enqueue({ kind: "undo" });
  }

  const keysDialog = document.getElementById("keys-dialog");
  // Typing goes to text fields; a ticked checkbox or a pressed button keeps the shortcuts.
  const TYPING = "input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit]), select, textarea";

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
    else if ((e.key === "d" || e.key === "D") && playable) deal();
    else if ((e.key === "u" || e.key === "U") && playable && !e.repeat) undo(); // a held key: once
    else if ((e.key === "h" || e.key === "H") && playable && hintForm && !inflight && !queue.length) hintForm.requestSubmit();
  });

  document.addEventListener("click", (e) => {
    const button = e.target.closest("[data-action]");
    if (!button) return;
    const action = button.dataset.action;
    if (action === "deal") {
      e.preventDefault();
      deal();
    } else if (action === "undo" && playable) {
      e.preventDefault();
      // The second click of a double click is the same press: it takes back one move.
      if (e.detail < 2) undo();
    } else if (action === "keys" && keysDialog) {
      keysDialog.showModal();
    }
  });

  // Forms that ask first (restart this deal).
  document.addEventListener("submit", (e) => {
    const question = e.target.dataset?.confirm;
    if (question && !window.confirm(question)) e.preventDefault();
  });

  table.addEventListener("focusin", (e) => {
    if (e.target.classList.contains("pile")) focusId = e.target.id;
  });

  // -- after the server answers ------------------------------------------------------------

  function slideIn() {
    const f = flight;
    flight = null;
    if (!f || !f.rect || reduced.matches) return;
    const target = pileEl(f.to);
    if (!target) return;
    const cards = cardsOf(target).slice(-f.count);
    if (!cards.length) return;
    const r = cards[0].getBoundingClientRect();
    const dx = f.rect.left - r.left;
    const dy = f.rect.top - r.top;
    if (Math.abs(dx) + Math.abs(dy) < 2) return;
    for (const c of cards) {
      // While it slides over other piles, the card lets taps through to what lies under it
      // (the next tap on the stock must reach the stock, not the card just dealt from it).
      c.classList.add("flying");
      const slide = c.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
        duration: 160,
        easing: "ease-out",
      });
      slide.onfinish = slide.oncancel = () => c.classList.remove("flying");
    }
  }

  // The end-of-game and no-move panels float over the foot of the screen: when one appears
  // over the table, the page scrolls just enough for the whole table to show above it (the
  // page keeps room below for this).
  let panelShown = !!statusEl()?.querySelector(".summary");
  function clearPanel() {
    const panel = statusEl()?.querySelector(".summary");
    if (panel && !panelShown) {
      const over = table.getBoundingClientRect().bottom - panel.getBoundingClientRect().top;
      if (over > 0) window.scrollBy({ top: over + 8, behavior: reduced.matches ? "auto" : "smooth" });
    }
    panelShown = !!panel;
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

  // A sound for each answer, if the player chose sounds (off by default).
  let audio = null;
  function beep(ok) {
    if (!document.body.classList.contains("pref-sound")) return;
    try {
      audio = audio || new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = ok ? 660 : 220;
      gain.gain.setValueAtTime(0.08, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + (ok ? 0.08 : 0.2));
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.2);
    } catch {
      // no sound on this browser: play goes on
    }
  }

  function addToSaid(text) {
    const span = announcer.querySelector("span");
    if (span) span.textContent += " " + text;
    else say(text, true);
  }

  document.body.addEventListener("htmx:afterRequest", (e) => {
    const from = e.detail.elt;
    if (!(from instanceof HTMLFormElement)) return;
    const mine = inflight !== null && (from === form || from === undoForm);
    const status = e.detail.xhr ? e.detail.xhr.status : 0;
    const ok = e.detail.successful && status === 200;
    if (ok && from === form) slideIn();
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
    }
    // A card picked while the server was answering stays picked, if it is still there.
    const kept = picked;
    picked = null;
    clearMarks();
    if (kept && inPlay()) {
      const el = pileEl(kept.pile);
      if (el) pick(el, kept.count, true);
    }
    syncControls();
    clearPanel();
    if (focusId && document.activeElement === document.body) {
      document.getElementById(focusId)?.focus({ preventScroll: true });
    }
    table.dataset.queued = String(queue.length);
    if (!inflight && !queue.length) table.classList.remove("busy");
    // The next action goes once htmx has finished with this request (a request started from
    // inside its own afterRequest handler can be dropped).
    setTimeout(pump, 0);
  });

  // -- the clock, the share link, preferences ------------------------------------------------

  // Active time, as the server counts it: the time between actions, each pause counted up to
  // the idle cap only (so a closed tab or a long break does not count).
  let clockBase = null;
  function startClock() {
    const clock = document.getElementById("clock");
    if (clock && clock !== clockBase?.el) {
      const d = clock.dataset;
      clockBase = { el: clock, seconds: Number(d.elapsed), idle: Number(d.idle || 0), cap: Number(d.cap || 0), at: Date.now() };
    }
  }
  function tick() {
    if (!clockBase || !clockBase.el.isConnected || !clockBase.el.hasAttribute("data-running")) return;
    const idle = clockBase.idle + (Date.now() - clockBase.at) / 1000;
    const s = clockBase.seconds + Math.floor(clockBase.cap ? Math.min(idle, clockBase.cap) : idle);
    const h = Math.floor(s / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = String(s % 60).padStart(2, "0");
    clockBase.el.textContent = h ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
  }
  startClock();
  setInterval(tick, 1000);

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

  // Watching someone else's game in play: the board is asked for every few seconds (the
  // server answers 204 while nothing has changed).
  if (!playable && inPlay()) {
    const watch = setInterval(() => {
      const s = statusEl();
      if (!s || !inPlay()) {
        clearInterval(watch);
        return;
      }
      if (document.hidden) return;
      htmx.ajax("GET", `/games/${s.dataset.game}/board?version=${s.dataset.version}`, {
        source: table,
        swap: "none",
      });
    }, 4000);
  }

})();
