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

/* The page this browser shows (path and query) in a cookie, so a sign-in link opened
   without next= lands back on it rather than on Live (the server checks it is a path of
   its own: dashboard/authority/routes.py). Kept at every move: Dash's pages change the
   URL with pushState. Names a page, grants nothing. */
(function () {
  var MAX = 2000;
  function remember() {
    var here = window.location.pathname + window.location.search;
    var value = encodeURIComponent(here);
    if (here.indexOf("/signin") === 0 || here.length > MAX || value.length > 2 * MAX) {
      return;
    }
    document.cookie = "hitboard_here=" + value +
      "; path=/; max-age=604800; SameSite=Lax" +
      (window.location.protocol === "https:" ? "; Secure" : "");
  }
  ["pushState", "replaceState"].forEach(function (name) {
    var original = window.history[name];
    window.history[name] = function () {
      var result = original.apply(this, arguments);
      remember();
      return result;
    };
  });
  window.addEventListener("popstate", remember);
  remember();
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
    },
    /* The time-zone control's options: the zone shown, UTC and this browser's, and
       what the typed text names among ``zones`` (every zone the server knows). A list of
       ~600 made the dropdown index them all before the page's first chart drew. */
    zoneOptions: function (search, value, zones) {
      var MAX = 100;
      var known = zones || [];
      var wanted = (search || "").trim().toLowerCase().replace(/ /g, "_");
      var shown = [];
      function add(zone) {
        if (zone && shown.indexOf(zone) < 0 && known.indexOf(zone) >= 0) { shown.push(zone); }
      }
      add(value);
      if (wanted) {
        for (var i = 0; i < known.length && shown.length < MAX; i++) {
          if (known[i].toLowerCase().indexOf(wanted) >= 0) { add(known[i]); }
        }
        return shown;
      }
      add("UTC");
      try { add(Intl.DateTimeFormat().resolvedOptions().timeZone); } catch (e) { /* none */ }
      var options = shown.map(function (zone) { return { label: zone, value: zone }; });
      options.push({ label: "Type to search " + known.length + " zones…", value: "",
                     disabled: true });
      return options;
    }
  };
})();

/* Zoom kept across refreshes. A refreshed figure resets a drag-zoom in plotly.js 4 even
   with an unchanged uirevision (the range it compares is the one autorange filled in),
   so charts inside a ".keep-zoom" box remember the user's ranges and put them back after
   each new figure, until a double click (autorange) or a new view (another uirevision). */
(function () {
  var AXES = ["xaxis", "yaxis"];

  function rangeOf(event, axis) {
    if (event[axis + ".range"]) { return event[axis + ".range"].slice(); }
    if (event[axis + ".range[0]"] !== undefined) {
      return [event[axis + ".range[0]"], event[axis + ".range[1]"]];
    }
    return null;
  }

  function keep(gd) {
    if (gd.__hitboardKeep) { return; }
    gd.__hitboardKeep = { ranges: {}, revision: null, restoring: false };
    var state = gd.__hitboardKeep;
    gd.on("plotly_relayout", function (event) {
      if (state.restoring) { return; }
      state.revision = gd.layout.uirevision;
      AXES.forEach(function (axis) {
        if (event[axis + ".autorange"]) { delete state.ranges[axis]; }
        var range = rangeOf(event, axis);
        if (range) { state.ranges[axis] = range; }
      });
    });
    gd.on("plotly_react", function () {
      if (state.restoring) { return; }
      if (gd.layout.uirevision !== state.revision) { state.ranges = {}; return; }
      var update = {};
      AXES.forEach(function (axis) {
        var wanted = state.ranges[axis];
        var shown = gd.layout[axis] && gd.layout[axis].range;
        if (wanted && !(shown && shown[0] === wanted[0] && shown[1] === wanted[1])) {
          update[axis + ".range"] = wanted.slice();
          update[axis + ".autorange"] = false;
        }
      });
      if (!Object.keys(update).length) { return; }
      state.restoring = true;
      window.Plotly.relayout(gd, update).then(
        function () { state.restoring = false; },
        function () { state.restoring = false; });
    });
  }

  function scan() {
    /* Every chart, whatever config its page gives it: no cloud action in the toolbar. */
    if (window.Plotly && !window.Plotly.__hitboardConfigured) {
      window.Plotly.setPlotConfig({ showSendToCloud: false, showEditInChartStudio: false,
                                    plotlyServerURL: "" });
      window.Plotly.__hitboardConfigured = true;
    }
    document.querySelectorAll(".keep-zoom .js-plotly-plot").forEach(function (gd) {
      if (gd.on) { keep(gd); }
    });
  }
  new MutationObserver(scan).observe(document.documentElement,
                                     { childList: true, subtree: true });
})();
