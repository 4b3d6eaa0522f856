// Signing in while a name is under attack (app/web/http/signin_guard.py): before the sign-in form
// goes, ask the server whether this browser must prove a moment of work; if so, find a number
// n such that SHA-256("<nonce>:<n>") starts with the asked number of zero bits (about a
// second, static/js/work.js), and send it with the form.
(() => {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  const WORDS = JSON.parse(document.querySelector("meta[name=ph-words]")?.content || "{}");
  const w = (text, vars = {}) => (WORDS[text] || text).replace(/%\((\w+)\)s/g, (_, k) => vars[k]);
  const form = document.querySelector("form[data-signin]");
  if (!form) return;
  const said = form.querySelector(".signin-work");

  const { solve } = window.PatienceWork;

  // What the server said for the name typed (asked as soon as the name is changed, so that
  // the work is done while the password is typed): {name, required, challenge, work}.
  let state = null;
  const typed = () => form.elements.name.value.trim();

  function prepare(name, answer) {
    state = { name, required: !!answer.required, challenge: answer.challenge, proof: null };
    if (!state.required) return;
    const mine = state;
    said.textContent = w(
      "This name has had many wrong passwords from elsewhere: this browser is doing about a second of work to show it is not a guessing machine…",
    );
    mine.work = solve(answer.nonce, Number(answer.bits)).then((proof) => {
      mine.proof = proof;
      if (state === mine) said.textContent = w("Ready.");
    });
  }

  form.elements.name.addEventListener("change", () => {
    const name = typed();
    state = null;
    if (!name) return;
    fetch(`/signin/challenge?name=${encodeURIComponent(name)}`, { credentials: "same-origin" })
      .then((r) => r.json())
      .then((answer) => { if (typed() === name) prepare(name, answer); })
      .catch(() => {}); // no answer: the form goes as it is, and the server says what it needs
  });

  // A refusal that asked for a proof comes back with a challenge for the name: work at once.
  if (form.dataset.nonce) {
    prepare(typed(), { required: true, challenge: form.dataset.challenge, nonce: form.dataset.nonce, bits: form.dataset.bits });
  }

  // The form goes at once unless a proof was asked for this name and is not ready yet.
  form.addEventListener("submit", (event) => {
    if (!state || state.name !== typed() || !state.required) return;
    const mine = state;
    if (mine.proof === null) {
      event.preventDefault();
      form.querySelector("button[type=submit]").disabled = true;
      mine.work.then(() => {
        form.querySelector("button[type=submit]").disabled = false;
        if (state === mine) form.requestSubmit();
      });
      return;
    }
    form.elements.challenge.value = mine.challenge;
    form.elements.proof.value = mine.proof;
    state = null; // a proof is good for one attempt
  });
})();
