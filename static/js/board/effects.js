// What the page does with the server's answer beyond swapping it in: cards slide from where
// they were, a sound if the player chose sounds, and the end-of-game panel is scrolled clear.
import { cardsOf, pileEl, reduced, statusEl, table } from "./dom.js";

// Moved cards slide into place from ``rect`` (where they were when the action was sent).
export function slideIn(f) {
  if (!f || !f.rect || reduced.matches) return;
  const target = pileEl(f.to);
  if (!target) return;
  const cards = cardsOf(target).slice(-f.count);
  if (!cards.length) return;
  const r = cards[0].getBoundingClientRect();
  const dx = f.rect.left - r.left;
  const dy = f.rect.top - r.top;
  if (Math.abs(dx) + Math.abs(dy) < 2) return;
  for (const c of cards) {
    // While it slides over other piles, the card lets taps through to what lies under it
    // (the next tap on the stock must reach the stock, not the card just dealt from it).
    c.classList.add("flying");
    const slide = c.animate([{ transform: `translate(${dx}px, ${dy}px)` }, { transform: "none" }], {
      duration: 160,
      easing: "ease-out",
    });
    slide.onfinish = slide.oncancel = () => c.classList.remove("flying");
  }
}

// The end-of-game and no-move panels float over the foot of the screen: when one appears
// over the table, the page scrolls just enough for the whole table to show above it (the
// page keeps room below for this).
let panelShown = !!statusEl()?.querySelector(".summary");
export function clearPanel() {
  const panel = statusEl()?.querySelector(".summary");
  if (panel && !panelShown) {
    const over = table.getBoundingClientRect().bottom - panel.getBoundingClientRect().top;
    if (over > 0) window.scrollBy({ top: over + 8, behavior: reduced.matches ? "auto" : "smooth" });
  }
  panelShown = !!panel;
}

// A sound for each answer, if the player chose sounds (off by default).
let audio = null;
export function beep(ok) {
  if (!document.body.classList.contains("pref-sound")) return;
  try {
    audio = audio || new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = ok ? 660 : 220;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + (ok ? 0.08 : 0.2));
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.2);
  } catch {
    // no sound on this browser: play goes on
  }
}
