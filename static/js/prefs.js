// Preferences: the theme, the card back and the other choices apply without a reload. The
// form is sent by htmx as it changes (hx-trigger="change"); the server saves them on the
// account and in the cookie, and answers with the classes it paints the page with (the
// HX-Trigger event "prefs-saved"), which go on <body> here. Also: a game's first-visit guide,
// dismissed once and for all (the server remembers it; this takes it off the page).
(() => {
  "use strict";
  function announce(text) {
    const region = document.getElementById("announce");
    if (!region) return;
    const span = document.createElement("span");
    span.className = "said";
    span.textContent = text;
    region.replaceChildren(span);
  }

  document.addEventListener("prefs-saved", (e) => {
    if (!e.target.closest("form.prefs-form")) return;
    document.body.className = e.detail.classes;
    announce("Preferences saved.");
  });

  document.addEventListener("htmx:afterRequest", (e) => {
    const form = e.detail.elt;
    if (form.matches("form.guide-form") && e.detail.successful) form.closest(".guide")?.remove();
    if (form.matches("form.prefs-form") && !e.detail.successful) {
      announce("Preferences not saved on the server: try again.");
    }
  });
})();
