// Live update: poll the server's change counter; when files or indexes changed, reload the page
// (a page with a form being filled in waits until the form loses focus).
(function () {
  "use strict";
  var generation = document.body.getAttribute("data-generation");
  var badge = document.getElementById("live");
  function busy() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT") && a.value;
  }
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
