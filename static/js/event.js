// An event's live standings: the server logs them once per change and streams that JSON as
// "event: standings"; this rebuilds the table from it (text only, no HTML from the wire).
(function () {
  "use strict";
  // Seconds with one decimal, as the page's language writes them ("12.3 s", "12,3 s").
  var SECONDS = new Intl.NumberFormat(document.documentElement.lang || undefined, {
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  });
  function cell(row, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    row.appendChild(td);
    return td;
  }
  function draw(body, standings) {
    body.textContent = "";
    standings.forEach(function (s) {
      var tr = document.createElement("tr");
      cell(tr, String(s.rank));
      var who = cell(tr, "");
      var a = document.createElement("a");
      a.href = "/players/" + encodeURIComponent(s.player);
      a.textContent = s.player;
      who.appendChild(a);
      cell(tr, String(s.points), "points");
      cell(tr, String(s.wins));
      cell(tr, String(s.games));
      cell(tr, SECONDS.format(s.active_ms / 1000) + "\u00a0s");
      cell(tr, String(s.streak));
      body.appendChild(tr);
    });
    var count = document.querySelector(".event-players");
    if (count) count.textContent = String(standings.length);
  }
  function start() {
    var table = document.getElementById("event-standings");
    if (!table || !table.dataset.stream || !window.EventSource) return;
    var source = new EventSource(table.dataset.stream);
    source.addEventListener("standings", function (e) {
      var data = JSON.parse(e.data);
      draw(table.querySelector("tbody"), data.standings);
      table.dataset.updated = String(Date.now());
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
