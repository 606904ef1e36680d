/* hitboard's browser side. Loaded by Dash before its renderer starts. */

/* A view without a time zone in its URL gets the browser's own, written into the URL
   in place (replaceState: no extra history entry), so every later link carries it. */
(function () {
  var params = new URLSearchParams(window.location.search);
  if (params.has("tz")) { return; }
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone) { return; }
  params.set("tz", zone);
  window.history.replaceState(window.history.state, "",
    window.location.pathname + "?" + params.toString() + window.location.hash);
})();

window.dash_clientside = window.dash_clientside || {};
window.dash_clientside.hitboard = (function () {
  var lastData = null;
  var receivedAt = 0;
  return {
    /* "updated 3 s ago": the data's age when the server sent it plus the time since it
       arrived, so a viewer whose clock is off still reads the right age. */
    freshness: function (_tick, updated, paused) {
      if (!updated) { return "Waiting for data…"; }
      if (updated !== lastData) { lastData = updated; receivedAt = Date.now(); }
      var age = Math.max(0, Math.round(updated.age + (Date.now() - receivedAt) / 1000));
      return (paused ? "Paused · " : "") + "updated " + age + " s ago";
    }
  };
})();
