/* In-place moves on a page drawn from its query string (History: its root element says
   data-inplace="<its path>"). A link to the same path with another query, or the back
   and forward buttons between two such entries, only set the query of Dash's "url"
   location (a history entry, no reload): the page's callbacks draw the new view from
   it. Dash pages' router would otherwise build the whole page again and run every one
   of its callbacks, on the old page and then on the new one (17 requests a click).
   Any other link or history entry goes on as usual. */
(function () {
  function inplace(pathname) {
    var root = document.querySelector("[data-inplace]");
    return Boolean(root) && root.getAttribute("data-inplace") === pathname;
  }

  function show(search) {
    var clientside = window.dash_clientside;
    if (!clientside || !clientside.set_props) { return false; }
    clientside.set_props("url", { search: search });
    return true;
  }

  document.addEventListener("click", function (event) {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey ||
        event.shiftKey || event.altKey) { return; }
    var link = event.target.closest ? event.target.closest("a[href]") : null;
    if (!link || (link.target && link.target !== "_self") || link.hasAttribute("download")) {
      return;
    }
    var to = new URL(link.getAttribute("href"), window.location.href);
    if (to.origin !== window.location.origin || to.pathname !== window.location.pathname ||
        to.hash || !inplace(to.pathname)) { return; }
    if (to.search !== window.location.search && !show(to.search)) { return; }
    event.preventDefault();
    event.stopPropagation();                   // not dcc.Link's own move as well
  }, true);

  window.addEventListener("popstate", function (event) {
    if (!inplace(window.location.pathname)) { return; }
    if (show(window.location.search)) { event.stopImmediatePropagation(); }
  }, true);
})();
