// Dates in the player's time zone: every <time data-local> shows its UTC instant in local
// time, and every [data-countdown] counts down to its instant (the server sends UTC).
(function () {
  "use strict";
  function localise() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (!isNaN(at)) {
        el.textContent = at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
        el.title = el.getAttribute("datetime");
      }
    });
  }
  function tick() {
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.max(0, new Date(el.getAttribute("data-countdown")) - Date.now());
      var s = Math.floor(left / 1000);
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      el.textContent = left ? "in " + h + " h " + String(m).padStart(2, "0") + " min" : "over";
    });
  }
  function start() {
    localise();
    tick();
    setInterval(tick, 30000);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
