// Arrow keys (and Home/End) step through a replay by following the matching control link.
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const link = document.querySelector(`#replay-controls a[data-key="${event.key}"]`);
  if (link) {
    event.preventDefault();
    window.location.assign(link.href);
  }
});
