/* hitboard: <script defer src="https://STATS/hit.js" data-site="SITE"></script>
   A page view per load and per route change (pushState, replaceState, back; hash routes
   with data-hash="true"), a path once in a row; prerendered: once shown. Custom events:
   hitboard("Signup", {props: {plan: "pro"}, revenue: {currency: "EUR", amount: "49"}}),
   calls made before this script loads queued by the stub
     window.hitboard = window.hitboard || function () {
       (window.hitboard.q = window.hitboard.q || []).push(arguments) };
   or a click on an element with data-hitboard-event="Signup" (its props in
   data-hitboard-event-plan="pro"...). With data-outbound="true", a click on a link to
   another host is an "Outbound Link: Click"; with data-downloads="true" (or a list:
   "pdf,zip"), one on a file of those types a "File Download" (props: url). How long a
   page was visible is sent when it is hidden or left (engagement). No cookie, no
   storage, nothing under Do-Not-Track. Served minified, under 2 KB: ES5 only (the
   minifier's language). */
(function (d, n, w, h, where) {
  var s = d.currentScript, site = s && s.getAttribute("data-site"),
      queued = (w.hitboard && w.hitboard.q) || [], EVENT = "data-hitboard-event";
  w.hitboard = function () { queued.push(arguments); };     // until the page is shown
  if (!site || n.doNotTrack == "1")
    return w.hitboard = function () {};
  function attr(name) { return s.getAttribute("data-" + name); }
  function on(target, type, listener) { target.addEventListener(type, listener, true); }
  var url = new URL("hit", s.src).href, hash = attr("hash") == "true",
      outbound = attr("outbound") == "true", files = attr("downloads"),
      last, from = d.referrer, shown = 0, sent = 0, since;
  files = (files == "true" ? "pdf,zip,gz,7z,rar,dmg,exe,msi,csv,xlsx,docx,mp3,mp4"
    : files || "").split(",");

  function send(data) {
    data.site = site;
    var body = JSON.stringify(data);
    if (!(n.sendBeacon && n.sendBeacon(url, body)))
      fetch(url, {method: "POST", body: body, keepalive: true, credentials: "omit"});
  }
  function pause() {
    if (since) shown += Date.now() - since;
    since = 0;
  }
  function resume() {
    if (!since && d.visibilityState != "hidden") since = Date.now();
  }
  function engaged() {            // the page's visible time so far, when it grew
    pause();
    if (last && shown > sent) send({page: last, engagement: sent = shown});
  }
  function view() {
    var page = where.pathname + (hash ? where.hash : "");
    if (page == last) return;
    if (last) {
      engaged();
      from = where.origin + last;
    }
    last = page;
    shown = sent = 0;
    resume();
    send({page: page, referrer: from});
  }
  function event(name, options) {
    options = options || {};
    send({page: last || where.pathname, event: name, props: options.props,
          revenue: options.revenue});
  }
  function clicked(e) {
    var found = e.target.closest("[" + EVENT + "]"), link = e.target.closest("a[href]"),
        props = {}, i, m;
    if (found) {
      for (i = 0; i < found.attributes.length; i++)
        if ((m = found.attributes[i].name.match(/^data-hitboard-event-(.+)/)))
          props[m[1]] = found.attributes[i].value;
      event(found.getAttribute(EVENT), {props: props});
    }
    if (!link || !/^https?:/.test(link.protocol)) return;
    props = {props: {url: link.href.slice(0, 200)}};
    if (/\./.test(link.pathname)
        && files.indexOf(link.pathname.split(".").pop().toLowerCase()) >= 0)
      event("File Download", props);
    else if (outbound && link.host != where.host) event("Outbound Link: Click", props);
  }
  function start() {
    view();
    w.hitboard = event;
    for (var i = 0; i < queued.length; i++) event.apply(0, queued[i]);
  }

  ["pushState", "replaceState"].forEach(function (name) {
    var f = h[name];
    h[name] = function () { var r = f.apply(this, arguments); view(); return r; };
  });
  on(w, "popstate", view);
  if (hash) on(w, "hashchange", view);
  on(d, "click", clicked);
  on(d, "visibilitychange", function () {       // a bfcache restore shows it again
    if (d.visibilityState == "hidden") engaged(); else resume();
  });
  on(w, "pagehide", engaged);
  if (d.prerendering) d.addEventListener("prerenderingchange", start, {once: true});
  else start();
})(document, navigator, window, history, location);
