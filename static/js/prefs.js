// Preferences: the theme, the card back and the other choices apply at once (no reload) and
// are saved in the cookie and, through the server, on the account. The server renders them
// into the page, so the first paint already has them (no flash). Also: a game's first-visit
// guide, dismissed once and for all.
(() => {
  "use strict";
  const LOOKS = { four: "pref-four", large: "pref-large", sound: "pref-sound" };

  function announce(text) {
    const region = document.getElementById("announce");
    if (!region) return;
    const span = document.createElement("span");
    span.className = "said";
    span.textContent = text;
    region.replaceChildren(span);
  }

  function cookieFlags() {
    const found = document.cookie.split("; ").find((c) => c.startsWith("ph_prefs="));
    return found ? decodeURIComponent(found.slice(9)).split(".").filter(Boolean) : [];
  }

  function setCookie(flags) {
    const value = [...new Set(flags)].sort().join(".");
    document.cookie = `ph_prefs=${value}; path=/; max-age=${400 * 86400}; samesite=lax`;
  }

  function post(form) {
    return fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { "HX-Request": "true" },
      credentials: "same-origin",
    });
  }

  document.addEventListener("change", (e) => {
    const form = e.target.closest("form.prefs-form");
    if (!form) return;
    const f = form.elements;
    const flags = ["auto", "four", "large", "sound"].filter((n) => f[n] && f[n].checked);
    const theme = f.theme ? f.theme.value : "light";
    const back = f.cardback ? f.cardback.value : "blue";
    if (theme === "dark") flags.push("dark");
    if (back !== "blue") flags.push(`back-${back}`);
    const body = document.body.classList;
    for (const [flag, cls] of Object.entries(LOOKS)) body.toggle(cls, flags.includes(flag));
    body.toggle("theme-dark", theme === "dark");
    body.toggle("back-red", back === "red");
    body.toggle("back-gold", back === "gold");
    setCookie([...flags, ...cookieFlags().filter((g) => g.startsWith("guide-"))]);
    post(form).then(
      (answer) => announce(answer.ok ? "Preferences saved." : "Preferences not saved on the server: try again."),
      () => announce("Preferences not saved on the server: try again."),
    );
  });

  // The first-visit guide: "Got it" hides it and remembers (no reload).
  document.addEventListener("submit", (e) => {
    const form = e.target.closest("form.guide-form");
    if (!form) return;
    e.preventDefault();
    setCookie([...cookieFlags(), `guide-${form.elements.game.value}`]);
    form.closest(".guide")?.remove();
    post(form);
  });
})();
