// Signing in while a name is under attack (app/web/http/signin_guard.py): before the sign-in form
// goes, ask the server whether this browser must prove a moment of work; if so, find a number
// n such that SHA-256("<nonce>:<n>") starts with the asked number of zero bits (about a
// second), and send it with the form. No library: a small SHA-256 for one short block.
(() => {
  "use strict";
  // The page's words for the scripts, in its language (app/web/pages/jswords.py).
  const WORDS = JSON.parse(document.querySelector("meta[name=ph-words]")?.content || "{}");
  const w = (text, vars = {}) => (WORDS[text] || text).replace(/%\((\w+)\)s/g, (_, k) => vars[k]);
  const form = document.querySelector("form[data-signin]");
  if (!form) return;
  const said = form.querySelector(".signin-work");

  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const W = new Uint32Array(64);
  const ror = (x, n) => (x >>> n) | (x << (32 - n));

  // The first word of SHA-256 of an ASCII text of at most 55 characters (one block): enough to
  // count leading zero bits up to 32.
  function firstWord(text) {
    W.fill(0);
    for (let i = 0; i < text.length; i++) W[i >> 2] |= text.charCodeAt(i) << (24 - 8 * (i & 3));
    W[text.length >> 2] |= 0x80 << (24 - 8 * (text.length & 3));
    W[15] = text.length * 8;
    for (let i = 16; i < 64; i++) {
      const a = W[i - 15], b = W[i - 2];
      const s0 = ror(a, 7) ^ ror(a, 18) ^ (a >>> 3);
      const s1 = ror(b, 17) ^ ror(b, 19) ^ (b >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let a = 0x6a09e667, b = 0xbb67ae85, c = 0x3c6ef372, d = 0xa54ff53a;
    let e = 0x510e527f, f = 0x9b05688c, g = 0x1f83d9ab, h = 0x5be0cd19;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      const t2 = ((ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = b; b = a; a = (t1 + t2) | 0;
    }
    return (0x6a09e667 + a) >>> 0;
  }

  // Counts in slices, letting the page breathe between them.
  async function solve(nonce, bits) {
    const limit = 2 ** (32 - bits); // the first word must be below this
    for (let n = 0; ; ) {
      for (const end = n + 20000; n < end; n++) {
        if (firstWord(`${nonce}:${n}`) < limit) return String(n);
      }
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

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
