/* hitboard: <script defer src="https://STATS/hit.js" data-site="SITE"></script>
   Sends this page's path and referrer once per page load; no cookie, no storage,
   nothing when Do-Not-Track is on. */
(function (d, n, w) {
  var s = d.currentScript, site = s && s.getAttribute("data-site");
  if (!site || n.doNotTrack == "1" || w.doNotTrack == "1" || n.msDoNotTrack == "1") return;
  var url = new URL("hit", s.src).href,
      body = JSON.stringify({site: site, page: location.pathname, referrer: d.referrer});
  if (!(n.sendBeacon && n.sendBeacon(url, body))) {
    fetch(url, {method: "POST", body: body, keepalive: true, credentials: "omit"});
  }
})(document, navigator, window);
