/* History's clientside callbacks: what needs no data is done in the browser. */
window.dash_clientside = window.dash_clientside || {};
window.dash_clientside.history = (function () {
  var WHEN = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function day(date) {
    return date.getUTCFullYear() + "-" + two(date.getUTCMonth() + 1) + "-" +
      two(date.getUTCDate());
  }

  function offsetOf(text) {
    /* As Python's isoformat writes the offset of an ISO time: +05:30, +00:00 for Z. */
    if (!text) { return ""; }
    if (text === "Z") { return "+00:00"; }
    var digits = text.replace(":", "");
    return digits.slice(0, 3) + ":" + digits.slice(3);
  }

  /* The bounds of the bucket under a clicked point, one granularity finer, as
     dashboard/ranges.py's drill_down gives them: a day's local dates, an hour's local
     times (with the offset a DST day's label carries). */
  function bounds(granularity, clicked) {
    var m = WHEN.exec(String(clicked || "").trim());
    if (!m) { return null; }
    var base = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] || 0));
    if (granularity === "day") {
      return [day(new Date(base)), day(new Date(base + 86400000))];
    }
    if (granularity === "hour") {
      var offset = offsetOf(m[6]);
      var hour = function (t) {
        var d = new Date(t);
        return day(d) + "T" + two(d.getUTCHours()) + ":00" + offset;
      };
      return [hour(base), hour(base + 3600000)];
    }
    return null;
  }

  function encoded(value) {
    return encodeURIComponent(value).replace(/%3A/g, ":").replace(/%2F/g, "/");
  }

  return {
    /* A click on a day opens its hours, on an hour its minutes: the URL of the finer
       view (``drill_target`` on the server) with the clicked bucket's bounds. */
    drill: function (click, target) {
      var none = window.dash_clientside.no_update;
      var point = click && click.points && click.points[0];
      if (!point || !target) { return none; }
      var when = point.customdata;
      if (Array.isArray(when)) { when = when[0]; }
      var found = bounds(target.granularity, when) || bounds(target.granularity, point.x);
      if (!found) { return none; }
      var href = target.href
        .replace(/([?&])start=START(?=&|$)/, "$1start=" + encoded(found[0]))
        .replace(/([?&])end=END(?=&|$)/, "$1end=" + encoded(found[1]));
      var search = href.slice(href.indexOf("?"));
      return search === window.location.search ? none : search;
    }
  };
})();
