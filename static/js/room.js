// The room page: the race countdown. Everything else on the page is server-rendered and kept
// live by the htmx SSE extension; this only counts down to the start time the server sent.
(function () {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  var node = document.querySelector("meta[name=ph-words]");
  var WORDS = node ? JSON.parse(node.content) : {};
  function w(text, vars) {
    return (WORDS[text] || text).replace(/%\((\w+)\)s/g, function (_, k) { return vars[k]; });
  }
  function tick() {
    var el = document.getElementById("countdown");
    if (el) {
      var left = (Date.parse(el.dataset.startsAt) - Date.now()) / 1000;
      var text = left > 0 ? w("Starts in %(seconds)s…", { seconds: Math.ceil(left) }) : w("Go! The race is on.");
      if (el.textContent !== text) { el.textContent = text; }
    }
  }
  setInterval(tick, 200);
  document.addEventListener("DOMContentLoaded", tick);
})();
