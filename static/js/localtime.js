// Dates in the player's time zone: every <time data-local> shows its UTC instant in local
// time, and every [data-countdown] counts down to its instant (the server sends UTC).
(function () {
  "use strict";
  // In the page's language (<html lang>), worded by the browser: no catalog to keep here.
  var lang = document.documentElement.lang || undefined;
  var relative = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
  var minutes = new Intl.NumberFormat(lang, { style: "unit", unit: "minute", unitDisplay: "short" });
  function localise() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (!isNaN(at)) {
        el.textContent = at.toLocaleString(lang, { dateStyle: "medium", timeStyle: "short" });
        el.title = el.getAttribute("datetime");
      }
    });
  }
  function tick() {
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.max(0, new Date(el.getAttribute("data-countdown")) - Date.now());
      var m = Math.ceil(left / 60000);
      var h = Math.floor(m / 60);
      if (!left) el.textContent = relative.format(0, "second");
      else if (!h) el.textContent = relative.format(m, "minute");
      else el.textContent = relative.format(h, "hour") + (m % 60 ? " " + minutes.format(m % 60) : "");
      el.setAttribute("title", new Date(el.getAttribute("data-countdown")).toLocaleString(lang));
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
