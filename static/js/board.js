// Patience Hall board: click, drag (mouse and touch), double-click / double-tap and keyboard.
// Every way of moving fills in and submits the one move form; htmx sends it and swaps in the
// piles the server says changed. Nothing moves on the page before the server has answered.
(() => {
  "use strict";
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
  let busy = false;
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
    return count === 1 ? first : `${count} cards from ${first} up`;
  }

  // -- picking and dropping ----------------------------------------------------------------

  function clearMarks() {
    for (const el of table.querySelectorAll(".picked, .target, .hover, .dragging")) {
      el.classList.remove("picked", "target", "hover", "dragging");
    }
  }

  function cancel(quiet = false) {
    if (picked && !quiet) say("Put back.");
    picked = null;
    clearMarks();
  }

  function pick(el, count, quiet = false) {
    clearMarks();
    picked = null;
    const cards = cardsOf(el);
    if (kindOf(el) === "stock") return false;
    if (!cards.length) {
      if (!quiet) say(`${titleOf(el)} is empty.`);
      return false;
    }
    count = Math.min(count, cards.length);
    if (cards[cards.length - count].classList.contains("b")) {
      if (!quiet) say("Face-down cards cannot be moved.", true);
      return false;
    }
    picked = { pile: idOf(el), count };
    cards.slice(-count).forEach((c) => c.classList.add("picked"));
    const targets = destinations(picked.pile, count);
    targets.forEach((t) => pileEl(t)?.classList.add("target"));
    if (!quiet) {
      const where = targets.length
        ? "It can go to " + targets.map((t) => titleOf(pileEl(t))).join(", ") + "."
        : "It has no legal move now.";
      say(`Picked up ${names(el, count)}. ${where}`);
    }
    return true;
  }

  function destinations(from, count) {
    return legal()
      .filter((m) => m.from === from && (m.count === count || m.to === "stock"))
      .map((m) => m.to);
  }

  function submit(from, to, count, origin) {
    if (!playable || busy) return;
    if (from === "waste" && to === "stock") count = Number(pileEl("waste").dataset.count);
    const source = pileEl(from);
    const cards = source ? cardsOf(source).slice(-count) : [];
    flight = { to, count, rect: origin || (cards[0] && cards[0].getBoundingClientRect()) };
    form.elements.from.value = from;
    form.elements.to.value = to;
    form.elements.count.value = String(count);
    picked = null;
    clearMarks();
    lastTap = null;
    busy = true;
    table.classList.add("busy");
    form.requestSubmit();
  }

  function drop(el) {
    const { pile, count } = picked;
    submit(pile, idOf(el), count);
  }

  function deal() {
    if (!playable || busy) return;
    const stock = pileEl("stock");
    if (!stock) return;
    const redeal = legal().find((m) => m.from === "waste" && m.to === "stock");
    if (redeal) submit("waste", "stock", redeal.count, pileEl("waste").getBoundingClientRect());
    else submit("stock", "waste", 1, stock.getBoundingClientRect());
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
      say(cards.length ? `No foundation takes ${names(el, 1)} now.` : `${titleOf(el)} is empty.`, true);
      return;
    }
    const look = (m) => {
      const t = pileEl(m.to);
      const top = t.lastElementChild;
      return `${t.dataset.count}:${top ? top.getAttribute("aria-label") : ""}`;
    };
    if (new Set(fits.map(look)).size === 1) submit(id, fits[0].to, 1);
    else if (pick(el, 1, true)) say(`${names(el, 1)} fits more than one foundation: choose one.`);
  }

  // A tap or click (not a drag) on a pile, with the card under the pointer if any.
  function tap(el, card) {
    if (!playable || busy || !inPlay()) return;
    const id = idOf(el);
    const now = Date.now();
    const double = lastTap && lastTap.pile === id && now - lastTap.time < 450;
    lastTap = { pile: id, time: now };
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
    if (!playable || busy || !inPlay() || (e.pointerType === "mouse" && e.button !== 0)) return;
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
      tap(p.el, p.card);
      return;
    }
    const { ghost } = drag;
    const over = pileUnder(ghost);
    const origin = ghost.firstElementChild.getBoundingClientRect();
    ghost.remove();
    drag = null;
    if (over && picked) submit(picked.pile, idOf(over), picked.count, origin);
    else cancel(true);
  });

  window.addEventListener("pointercancel", () => {
    press = null;
    if (drag) {
      drag.ghost.remove();
      drag = null;
      cancel(true);
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
    if (!playable || busy || !inPlay()) return;
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
      if (playable && !busy && inPlay()) toFoundation(el);
    }
  });

  function undo() {
    const button = undoForm?.querySelector("button");
    if (!button || busy) return;
    if (button.disabled) say("There is no move you can take back now.", true);
    else undoForm.requestSubmit();
  }

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.metaKey || e.target.closest("input, select, textarea")) return;
    if (e.ctrlKey) {
      if (e.key === "z" && playable) {
        e.preventDefault();
        undo();
      }
      return;
    }
    if (e.key === "Escape") cancel();
    else if ((e.key === "d" || e.key === "D") && playable) deal();
    else if ((e.key === "u" || e.key === "U") && playable) undo();
    else if ((e.key === "h" || e.key === "H") && playable && hintForm && !busy) hintForm.requestSubmit();
  });

  document.addEventListener("click", (e) => {
    const dealButton = e.target.closest("[data-action=deal]");
    if (dealButton) {
      e.preventDefault();
      deal();
    }
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
      c.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
        duration: 160,
        easing: "ease-out",
      });
    }
  }

  function syncControls() {
    const button = undoForm?.querySelector("button");
    if (button) button.disabled = statusEl()?.dataset.undo !== "1" || !inPlay();
    startClock();
  }

  document.body.addEventListener("htmx:afterRequest", (e) => {
    const from = e.detail.elt;
    if (!(from instanceof HTMLFormElement)) return;
    busy = false;
    table.classList.remove("busy");
    const ok = e.detail.successful && e.detail.xhr && e.detail.xhr.status === 200;
    if (ok && from === form) slideIn();
    flight = null;
    if (!e.detail.xhr || e.detail.xhr.status === 0) {
      say("The server could not be reached: nothing was moved. Try again.", true);
    } else if (e.detail.xhr.status >= 400 && e.detail.xhr.status !== 409 && e.detail.xhr.status !== 422) {
      say("That did not work: please reload the page.", true);
    }
    cancel(true); // whatever was picked may have been swapped for a new element
    if (from === form) {
      form.elements.from.value = "";
      form.elements.to.value = "";
      form.elements.count.value = "1";
    }
    syncControls();
    if (focusId && document.activeElement === document.body) {
      document.getElementById(focusId)?.focus({ preventScroll: true });
    }
  });

  // -- the clock, the share link, preferences ------------------------------------------------

  let clockBase = null;
  function startClock() {
    const clock = document.getElementById("clock");
    if (clock && clock !== clockBase?.el) {
      clockBase = { el: clock, seconds: Number(clock.dataset.elapsed), at: Date.now() };
    }
  }
  function tick() {
    if (!clockBase || !clockBase.el.isConnected || !clockBase.el.hasAttribute("data-running")) return;
    const s = clockBase.seconds + Math.floor((Date.now() - clockBase.at) / 1000);
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
    const done = () => say(`Link to this deal copied: ${url}`);
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(done, () => window.location.assign(url));
    } else {
      window.prompt("Copy this link to share the deal:", url);
    }
  });

  const prefsForm = document.getElementById("prefs-form");
  prefsForm?.addEventListener("change", () => {
    const flags = ["auto", "four", "large"].filter((n) => prefsForm.elements[n].checked);
    document.cookie = `ph_prefs=${flags.join(".")}; path=/; max-age=${400 * 86400}; samesite=lax`;
    document.body.classList.toggle("pref-four", flags.includes("four"));
    document.body.classList.toggle("pref-large", flags.includes("large"));
    say("Preferences saved.");
  });
})();
