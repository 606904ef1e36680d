/* hitboard: <script defer src="https://STATS/hit.js" data-site="SITE"></script>
   A page view per load and per route change (pushState, replaceState, back; hash routes
   with data-hash="true"), a path once in a row; prerendered: once shown. No cookie, no
   storage, nothing under Do-Not-Track. */
(function (d, n, w, h) {
  var s = d.currentScript, site = s && s.getAttribute("data-site");
  if (!site || n.doNotTrack == "1" || w.doNotTrack == "1" || n.msDoNotTrack == "1") return;
  var url = new URL("hit", s.src).href, hash = s.getAttribute("data-hash") == "true",
      last = null, from = d.referrer;
  function view() {
    var page = location.pathname + (hash ? location.hash : "");
    if (page == last) return;
    if (last !== null) from = location.origin + last;
    last = page;
    var body = JSON.stringify({site: site, page: page, referrer: from});
    if (!(n.sendBeacon && n.sendBeacon(url, body)))
      fetch(url, {method: "POST", body: body, keepalive: true, credentials: "omit"});
  }
  ["pushState", "replaceState"].forEach(function (name) {
    var f = h[name];
    h[name] = function () { var r = f.apply(this, arguments); view(); return r; };
  });
  w.addEventListener("popstate", view);
  if (hash) w.addEventListener("hashchange", view);
  if (d.prerendering) d.addEventListener("prerenderingchange", view, {once: true});
  else view();
})(document, navigator, window, history);
