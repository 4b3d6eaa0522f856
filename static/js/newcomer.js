// Many new players from this address lately (a café, a school: app/web/http/newcomers.py): before
// this browser's first action makes its player, it does a moment of work (static/js/work.js)
// and hands the proof to the server, while the page is being read.
(() => {
  "use strict";
  const me = document.currentScript;
  if (!me || !me.dataset.challenge) return;
  const { challenge, nonce, bits } = me.dataset;

  window.PatienceWork.solve(nonce, Number(bits)).then((proof) => {
    let token = "";
    try {
      token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["x-csrftoken"] || "";
    } catch (_) { /* no token: the server refuses, and the first action says why */ }
    const body = new URLSearchParams({ challenge, proof, csrftoken: token });
    return fetch("/newcomer", { method: "POST", body, credentials: "same-origin" });
  }).catch(() => {}); // not accepted: the first action says what to do
})();
