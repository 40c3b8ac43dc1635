// Live update: poll the server's change counter; when files or indexes changed, reload the page
// (not while someone is typing into a form: that waits until 5 s after the last keystroke).
(function () {
  "use strict";
  var generation = document.body.getAttribute("data-generation");
  var badge = document.getElementById("live");
  var typed = 0;
  document.addEventListener("input", function () { typed = Date.now(); });
  function busy() { return Date.now() - typed < 5000; }
  function tick() {
    fetch("/api/version", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { badge.className = "live off"; return; }
        badge.className = "live";
        if (String(data.generation) !== generation && !busy()) { window.location.reload(); }
      })
      .catch(function () { badge.className = "live off"; });
  }
  window.setInterval(tick, 1500);
})();
