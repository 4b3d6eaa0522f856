// Dates in the player's time zone: every <time data-local> shows its UTC instant in local
// time, written the way the page's language writes dates, and every [data-countdown] counts
// down to its instant (the server sends UTC) in the page's words.
(function () {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  var node = document.querySelector("meta[name=ph-words]");
  var WORDS = node ? JSON.parse(node.content) : {};
  function w(text, vars) {
    return (WORDS[text] || text).replace(/%\((\w+)\)s/g, function (_, k) { return vars[k]; });
  }
  var LANG = document.documentElement.lang || undefined;
  function localise() {
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (!isNaN(at)) {
        el.textContent = at.toLocaleString(LANG, { dateStyle: "medium", timeStyle: "short" });
        el.title = el.getAttribute("datetime");
      }
    });
  }
  function tick() {
    document.querySelectorAll("[data-countdown]").forEach(function (el) {
      var left = Math.max(0, new Date(el.getAttribute("data-countdown")) - Date.now());
      var s = Math.floor(left / 1000);
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      el.textContent = left ? w("in %(h)s h %(m)s min", { h: h, m: String(m).padStart(2, "0") }) : w("over");
      el.setAttribute("title", new Date(el.getAttribute("data-countdown")).toLocaleString(LANG));
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
