// The console's one script: niceties only, everything works without it.
// "/" focuses the search box, copy buttons copy, and <time> elements show
// relative times in the viewer's time zone with the absolute time on hover.
(function () {
  "use strict";
  var slashFocused = false;
  document.addEventListener("keydown", function (e) {
    slashFocused = false;
    if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    var q = document.getElementById("q");
    if (q) { e.preventDefault(); q.focus(); q.select(); slashFocused = true; }
  });
  // Some input paths (remote control, some IMEs) deliver the character on
  // its own after the keydown: the "/" that moved the focus is not typed.
  document.addEventListener("keypress", function (e) {
    if (slashFocused && e.key === "/") e.preventDefault();
    slashFocused = false;
  }, true);
  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest("button[data-copy]") : null;
    if (!b) return;
    var src = document.getElementById(b.getAttribute("data-copy"));
    if (!src || !navigator.clipboard) return;
    navigator.clipboard.writeText(src.textContent.trim()).then(function () {
      var label = b.textContent;
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = label; }, 1500);
    }, function () {});
  });
  // A secret shown once ([data-secret]) is blanked when the page is hidden,
  // so the back/forward cache never shows it again.
  window.addEventListener("pagehide", function () {
    document.querySelectorAll("[data-secret]").forEach(function (el) { el.textContent = "(no longer shown)"; });
  });
  function relative(ms) {
    var s = Math.round(ms / 1000), future = s < 0, a = Math.abs(s), text;
    if (a < 45) text = a + " s";
    else if (a < 2700) text = Math.round(a / 60) + " min";
    else if (a < 79200) text = Math.round(a / 3600) + " h";
    else text = Math.round(a / 86400) + " d";
    return future ? "in " + text : text + " ago";
  }
  function render() {
    var now = Date.now();
    document.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      el.title = d.toLocaleString(undefined, { dateStyle: "full", timeStyle: "long" });
      el.textContent = relative(now - d.getTime());
    });
  }
  render();
  setInterval(render, 30000);
})();
