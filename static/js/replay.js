// Arrow keys (and Home/End) step through a replay by following the matching control link;
// typing in the "go to move" box is left alone.
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (event.target instanceof HTMLInputElement) return;
  const link = document.querySelector(`#replay-controls a[data-key="${event.key}"]`);
  if (link) {
    event.preventDefault();
    window.location.assign(link.href);
  }
});
