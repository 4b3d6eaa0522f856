// The clock: active time, as the server counts it. The server sends the count now
// (data-elapsed), where it stops while nobody acts (data-until: the idle cap reached) and,
// once with the page, the clock's faces (data-clock on the table: under an hour, from an
// hour); this goes on counting from the last answer and writes the count on the server's face.
import { table } from "./dom.js";

const FIELD = /h|mm|m|ss/g;
let base = null;

export function startClock() {
  const clock = document.getElementById("clock");
  if (clock && clock !== base?.el) {
    const d = clock.dataset;
    base = { el: clock, seconds: Number(d.elapsed), until: Number(d.until), at: Date.now() };
  }
}

function tick() {
  if (!base || !base.el.isConnected || !base.el.hasAttribute("data-running")) return;
  const s = Math.min(base.seconds + Math.floor((Date.now() - base.at) / 1000), base.until);
  const faces = table.dataset.clock.split(" ");
  const m = Math.floor((s % 3600) / 60);
  const h = Math.floor(s / 3600);
  const fields = { h, m, mm: String(m).padStart(2, "0"), ss: String(s % 60).padStart(2, "0") };
  base.el.textContent = faces[h > 0 ? 1 : 0].replace(FIELD, (f) => fields[f]);
}

export function runClock() {
  startClock();
  setInterval(tick, 1000);
}
