// A replay that plays: each step comes from the server as a fragment (htmx swaps the piles,
// the line saying what happened, and the step links); arrow keys, Home and End follow the
// matching link, Space plays and pauses, the speed is chosen in a list. The address follows
// the step, so a reload or a shared link opens where the player was.
(() => {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  const WORDS = JSON.parse(document.querySelector("meta[name=ph-words]")?.content || "{}");
  const w = (text, vars = {}) => (WORDS[text] || text).replace(/%\((\w+)\)s/g, (_, k) => vars[k]);
  const play = document.getElementById("replay-play");
  const speed = document.getElementById("replay-speed");
  if (!play) return;
  play.hidden = false;
  document.getElementById("replay-speed-label").hidden = false;
  let timer = null;

  const now = () => document.getElementById("replay-now");
  const at = () => Number(now().dataset.step);
  const last = () => Number(now().dataset.last);
  const link = (key) => document.querySelector(`#replay-steps a[data-key="${key}"]`);

  function follow(key) {
    const a = link(key);
    if (!a) return;
    // The links arrive with each step's fragment and htmx takes them up only once the swap
    // has settled; a key pressed before that would fall on a link htmx does not know yet.
    htmx.process(a);
    htmx.trigger(a, "click");
  }

  function stop() {
    clearInterval(timer);
    timer = null;
    play.textContent = w("▶ Play");
    play.setAttribute("aria-pressed", "false");
  }

  function start() {
    if (at() >= last()) follow("Home"); // from the end, play again from the deal
    play.textContent = w("⏸ Pause");
    play.setAttribute("aria-pressed", "true");
    timer = setInterval(() => {
      if (at() >= last()) stop();
      else follow("ArrowRight");
    }, Number(speed.value));
  }

  play.addEventListener("click", () => (timer ? stop() : start()));
  speed.addEventListener("change", () => {
    if (timer) {
      stop();
      start();
    }
  });

  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest("input, select, textarea")) return;
    if (event.key === " " && !event.target.closest("button, a")) {
      event.preventDefault();
      if (timer) stop();
      else start();
      return;
    }
    if (link(event.key)) {
      event.preventDefault();
      stop();
      follow(event.key);
    }
  });

  // After each step: the log marks the current move, the address and the jump box follow.
  document.body.addEventListener("htmx:afterRequest", () => {
    const step = at();
    document.querySelectorAll("#move-log [aria-current]").forEach((li) => li.removeAttribute("aria-current"));
    const current = document.querySelectorAll("#move-log > li")[step - 1];
    if (current) current.setAttribute("aria-current", "step");
    const box = document.querySelector(".replay-jump input");
    if (box) box.value = String(step);
    history.replaceState(null, "", `?step=${step}`);
  });
})();
