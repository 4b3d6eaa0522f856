// The room page: the race countdown. Everything else on the page is server-rendered and kept
// live by the htmx SSE extension; this only counts down to the start time the server sent.
(function () {
  "use strict";
  function tick() {
    var el = document.getElementById("countdown");
    if (el) {
      var left = (Date.parse(el.dataset.startsAt) - Date.now()) / 1000;
      var text = left > 0 ? "Starts in " + Math.ceil(left) + "…" : "Go! The race is on.";
      if (el.textContent !== text) { el.textContent = text; }
    }
  }
  setInterval(tick, 200);
  document.addEventListener("DOMContentLoaded", tick);
})();
