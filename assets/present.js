/* Presenter mode and keyboard shortcuts, on every page.

   - ?present=1 on any page opens /present with the same query (a reload stays there).
   - The presenter line grows in place: new minutes are appended with extendTraces, the
     current minute's value is restyled, the x range slides; never a new figure.
   - Rows of the top list keep their element (keyed), so a re-ranking moves them: FLIP.
   - Keys outside input fields: f full screen, space pause, ←/→ window, d theme,
     ? this list; s spike and g start/stop the load generator (presenter mode, signed
     in); t/w/m today/7 days/30 days and c compare on History. */
(function () {
  var params = new URLSearchParams(window.location.search);
  if (params.get("present") === "1" && window.location.pathname !== "/present") {
    window.location.replace("/present" + window.location.search + window.location.hash);
  }
})();

/* Keeps a key of the URL in step with presenter state, so a reload shows the same. */
function hitboardSetParam(key, value) {
  var params = new URLSearchParams(window.location.search);
  if (value === null) { params.delete(key); } else { params.set(key, value); }
  var search = params.toString();
  window.history.replaceState(window.history.state, "",
    window.location.pathname + (search ? "?" + search : "") + window.location.hash);
}

window.dash_clientside = window.dash_clientside || {};
window.dash_clientside.present = (function () {
  var COLORS = {
    dark: { text: "#ffffff", muted: "#c8d0d8", grid: "#2a3038", accent: "#4dd0ff",
            fill: "rgba(77,208,255,0.22)" },
    light: { text: "#000000", muted: "#2f3640", grid: "#d5dae0", accent: "#0047b3",
             fill: "rgba(0,71,179,0.15)" }
  };
  var stats = window.__present = { frames: 0, log: [], started: Date.now() };
  var shownTheme = null;

  function plot() {
    return document.querySelector("#present-graph .js-plotly-plot");
  }

  function applyTheme(gd, theme) {
    var c = COLORS[theme] || COLORS.dark;
    shownTheme = theme;
    window.Plotly.restyle(gd, { "line.color": c.accent, fillcolor: c.fill,
                                "marker.color": c.accent }, [0]);
    window.Plotly.restyle(gd, { "marker.line.color": c.accent }, [1]);
    window.Plotly.relayout(gd, {
      "font.color": c.text, "xaxis.color": c.muted, "yaxis.color": c.muted,
      "xaxis.gridcolor": c.grid, "yaxis.gridcolor": c.grid,
      "xaxis.linecolor": c.grid, "yaxis.linecolor": c.grid });
  }

  /* Trace 0 holds the complete minutes: it only ever gains points (extendTraces), or
     corrects one the server recounted (restyle); trace 1 is the minute still filling. */
  function update(gd, data) {
    integerTicks(gd, data);    // first: 12,000 hits drawn with a tick per hit hang the page
    var n = data.x.length - 1;
    var done = { x: data.x.slice(0, n), y: data.y.slice(0, n) };
    var trace = gd.data[0];
    var xs = (trace.x || []).slice();
    var ys = (trace.y || []).slice();
    if (!xs.length || gd.__presentWindow !== data.window) {
      gd.__presentWindow = data.window;
      window.Plotly.restyle(gd, { x: [done.x], y: [done.y] }, [0]);
    } else {
      var last = xs[xs.length - 1];
      var index = {};
      xs.forEach(function (x, i) { index[x] = i; });
      var changed = false;
      var add = { x: [], y: [] };
      done.x.forEach(function (x, i) {
        if (index[x] !== undefined) {
          if (ys[index[x]] !== done.y[i]) { ys[index[x]] = done.y[i]; changed = true; }
        } else if (x > last) { add.x.push(x); add.y.push(done.y[i]); }
      });
      if (changed) { window.Plotly.restyle(gd, { y: [ys] }, [0]); }
      if (add.x.length) {
        window.Plotly.extendTraces(gd, { x: [add.x], y: [add.y] }, [0], data.window);
      }
    }
    window.Plotly.restyle(gd, { x: [data.x.slice(n)], y: [data.y.slice(n)] }, [1]);
    /* The window ends a minute after now, so the filling minute's marker is never
       cut by the edge; it slides a little every update. */
    var now = new Date(data.now.replace(" ", "T"));
    var left = new Date(now.getTime() - data.window * 60000);
    var right = new Date(now.getTime() + 60000);
    window.Plotly.relayout(gd, { "xaxis.range": [stamp(left), stamp(right)],
                                 "xaxis.autorange": false });
    notes(gd, data.notes || {});
  }

  /* The window's notes (dashed lines, labels laid out by the server for the plot's
     width: components/presenter_notes.py), redrawn only when they change (a note added,
     one sliding out of the window or to the other side of its line). */
  function notes(gd, layout) {
    var key = JSON.stringify(layout);
    if (gd.__presentNotes === key) { return; }
    gd.__presentNotes = key;
    /* The labels sit in a band above the plot (its top margin), never over the line. */
    window.Plotly.relayout(gd, { shapes: layout.shapes || [],
                                 annotations: layout.annotations || [],
                                 "margin.t": layout.top || 12 });
  }

  /* Whole-number ticks while the counts are small (Plotly would label 0, 0.5, 1… as
     "0 1 1" in the axis's thousands-separated format), Plotly's own above: as Live. */
  function integerTicks(gd, data) {
    var small = Math.max.apply(null, [0].concat(data.y)) <= 8;
    if (gd.__presentSmall === small) { return; }
    gd.__presentSmall = small;
    window.Plotly.relayout(gd, { "yaxis.tick0": small ? 0 : null,
                                 "yaxis.dtick": small ? 1 : null });
  }

  function stamp(date) {
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) +
      " " + pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds());
  }

  return {
    /* Applies a server payload to the line without a new figure; counts frames and
       what the screen shows (bench/presenter.py reads window.__present); reports the
       plot's width when it changes, for the notes' labels. */
    chart: function (data, theme) {
      var skip = window.dash_clientside.no_update;
      var gd = plot();
      if (!gd || !window.Plotly || !gd.data) { return [skip, skip]; }
      if (theme && theme !== shownTheme) { applyTheme(gd, theme); }
      if (!data || !data.x) { return [skip, skip]; }
      update(gd, data);
      var total = data.y.reduce(function (a, b) { return a + b; }, 0);
      stats.frames += 1;
      stats.log.push([Date.now(), total]);
      if (stats.log.length > 2000) { stats.log.shift(); }
      var width = gd._fullLayout && gd._fullLayout._size ? Math.round(gd._fullLayout._size.w)
        : null;
      var changed = width && width !== gd.__presentWidth;
      gd.__presentWidth = width;
      return [stats.frames, changed ? width : skip];
    },
    pause: function (clicks) {
      var paused = (clicks || 0) % 2 === 1;
      return [paused, paused, paused ? "PAUSED" : "LIVE"];
    },
    theme: function (clicks, config) {
      var initial = (config && config.theme) || "dark";
      var other = initial === "dark" ? "light" : "dark";
      var theme = (clicks || 0) % 2 === 1 ? other : initial;
      if (clicks) { hitboardSetParam("theme", theme); }
      document.documentElement.dataset.theme = theme;
      return [theme, "present theme-" + theme];
    },
    window: function (_prev, _next, current, config) {
      var windows = config.windows;
      var i = windows.indexOf(current);
      if (i < 0) { i = 1; }
      var trigger = (window.dash_clientside.callback_context.triggered[0] || {}).prop_id || "";
      i = trigger.indexOf("prev") >= 0 ? Math.max(0, i - 1) : Math.min(windows.length - 1, i + 1);
      hitboardSetParam("window", String(windows[i]));
      return [windows[i], "Hits per minute · last " + windows[i] + " min"];
    },
    playlist: function (n, config) {
      var views = config.views;
      var view = views[(n || 0) % views.length];
      var names = { live: "Live", "history-30d": "Last 30 days", top: "Top pages today" };
      setTimeout(function () { window.dispatchEvent(new Event("resize")); }, 50);
      return [view !== "live", view !== "history-30d", view !== "top", names[view]];
    }
  };
})();

/* FLIP: rows of the top list slide from their old place to their new one. */
(function () {
  var places = {};

  function measure(list) {
    var found = {};
    Array.prototype.forEach.call(list.children, function (row) {
      if (row.dataset.key) { found[row.dataset.key] = row.getBoundingClientRect().top; }
    });
    return found;
  }

  function animate(list) {
    var now = measure(list);
    Array.prototype.forEach.call(list.children, function (row) {
      var before = places[row.dataset.key];
      var after = now[row.dataset.key];
      if (before === undefined || after === undefined || before === after) { return; }
      row.style.transition = "none";
      row.style.transform = "translateY(" + (before - after) + "px)";
      requestAnimationFrame(function () {
        requestAnimationFrame(function () {
          row.style.transition = "transform 600ms ease";
          row.style.transform = "";
        });
      });
    });
    places = now;
  }

  var observer = new MutationObserver(function () {
    var list = document.getElementById("present-top");
    if (list && !list.__flip) {
      list.__flip = new MutationObserver(function () { animate(list); });
      list.__flip.observe(list, { childList: true });
      places = measure(list);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    observer.observe(document.body, { childList: true, subtree: true });
  });
})();

/* The keyboard. */
(function () {
  var KEYS = [
    ["f", "full screen"], ["space", "pause / resume"], ["← →", "shorter / longer window"],
    ["d", "dark / light theme"], ["?", "this list"],
    ["s", "load generator spike (presenter mode, signed in)"],
    ["g", "load generator start / stop (presenter mode, signed in)"],
    ["t w m", "History: today, 7 days, 30 days"], ["c", "History: compare"]
  ];

  function click(selector) {
    var el = document.querySelector(selector);
    if (el) { el.click(); }
    return !!el;
  }

  function stepRadio(groupId, delta) {
    var inputs = document.querySelectorAll("#" + groupId + " input[type=radio]");
    var at = -1;
    inputs.forEach(function (input, i) { if (input.checked) { at = i; } });
    var next = inputs[at + delta];
    if (next) { next.click(); }
    return inputs.length > 0;
  }

  function overlay() {
    var box = document.getElementById("keys-overlay");
    if (box) {
      box.hidden = !box.hidden;
    } else {
      box = document.createElement("div");
      box.id = "keys-overlay";
      box.className = "keys-overlay";
      box.setAttribute("role", "dialog");
      box.setAttribute("aria-label", "Keyboard shortcuts");
      var title = document.createElement("h2");
      title.textContent = "Keyboard shortcuts";
      box.appendChild(title);
      var list = document.createElement("dl");
      KEYS.forEach(function (pair) {
        var dt = document.createElement("dt");
        dt.textContent = pair[0];
        var dd = document.createElement("dd");
        dd.textContent = pair[1];
        list.appendChild(dt);
        list.appendChild(dd);
      });
      box.appendChild(list);
      var close = document.createElement("p");
      close.textContent = "Esc or ? closes";
      box.appendChild(close);
      document.body.appendChild(box);
    }
    document.documentElement.classList.toggle("keys-open", !box.hidden);
  }

  function fullScreen() {
    if (document.fullscreenElement) {
      document.exitFullscreen().catch(function () {});
    } else if (document.documentElement.requestFullscreen) {
      document.documentElement.requestFullscreen().catch(function () {});
    }
  }

  function theme() {
    if (click("#present-theme")) { return true; }
    var other = document.querySelector("#shell-theme input[type=radio]:not(:checked)");
    if (other) { other.click(); }
    return !!other;
  }

  var ACTIONS = {
    "f": fullScreen,
    " ": function () { return click("#present-pause") || click("#live-pause"); },
    "ArrowLeft": function () {
      return click("#present-window-prev") || stepRadio("live-window", -1);
    },
    "ArrowRight": function () {
      return click("#present-window-next") || stepRadio("live-window", 1);
    },
    "d": theme,
    "?": overlay,
    "Escape": function () {
      var box = document.getElementById("keys-overlay");
      if (!box || box.hidden) { return false; }
      overlay();
    },
    "s": function () { return click("#present-spike") || click("#lg-spike"); },
    "g": function () { return click("#present-generator"); },
    "t": function () { return click("#history-range input[value='today']"); },
    "w": function () { return click("#history-range input[value='7d']"); },
    "m": function () { return click("#history-range input[value='30d']"); },
    "c": function () { return click("#history-compare input[type=checkbox]"); }
  };

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) { return; }
    var target = event.target;
    if (target && (target.isContentEditable ||
                   /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(target.tagName))) {
      var choice = target.tagName === "INPUT" && /^(radio|checkbox)$/.test(target.type);
      // A focused radio or checkbox keeps its own arrows and space (accessibility).
      if (!choice || /^(ArrowLeft|ArrowRight| )$/.test(event.key)) { return; }
    }
    var action = ACTIONS[event.key];
    if (action && action() !== false) { event.preventDefault(); }
  });
})();
