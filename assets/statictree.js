/* Cards sent as one element's data (components/statictable.py): a div whose data-tree
   holds nodes ("text", or [tag, attributes, ...children]) gets them as its children,
   built with textContent (text, never markup) and a short list of attributes; a link
   keeps its href only when it stays on this site. Dash's renderer pays for each element
   it adds with every element on the page, so History's panels as hundreds of elements
   took seconds to appear. React never touches the div's children; a new data-tree
   redraws them. */
(function () {
  var TAGS = ["div", "span", "section", "p", "a", "h2", "h3", "h4", "ol", "ul", "li",
              "table", "thead", "tbody", "tr", "th", "td", "small", "strong", "em",
              "abbr", "br", "sup", "sub", "b", "i", "label", "time"];
  var PLAIN = ["id", "title", "colspan", "rowspan", "role", "data-link"];

  function local(href) {
    /* A path on this site ("/history?..." or "?..."), never "//host" or a scheme. */
    return typeof href === "string" && /^(\/(?!\/)|\?|#)/.test(href);
  }

  function build(node) {
    if (typeof node === "string") { return document.createTextNode(node); }
    var tag = node[0], attributes = node[1] || {};
    var el = document.createElement(TAGS.indexOf(tag) >= 0 ? tag : "span");
    Object.keys(attributes).forEach(function (name) {
      var value = attributes[name];
      if (name === "class") {
        el.className = value;
      } else if (name === "style" && value && typeof value === "object") {
        Object.keys(value).forEach(function (key) { el.style[key] = String(value[key]); });
      } else if (name === "href") {
        if (local(value)) { el.setAttribute("href", value); }
      } else if (PLAIN.indexOf(name) >= 0 || /^(data|aria)-[a-z0-9-]+$/.test(name)) {
        el.setAttribute(name, String(value));
      }
    });
    for (var i = 2; i < node.length; i += 1) { el.appendChild(build(node[i])); }
    return el;
  }

  function draw(box) {
    var data = box.getAttribute("data-tree");
    if (data === null || box.__drawn === data) { return; }
    box.__drawn = data;
    var fragment = document.createDocumentFragment();
    JSON.parse(data).forEach(function (node) { fragment.appendChild(build(node)); });
    box.replaceChildren(fragment);
  }

  function drawIn(node) {
    /* Called for every element Dash or Plotly adds (a chart's redraw adds hundreds):
       getElementsByClassName is the cheap way to find the few boxes among them. */
    if (node.nodeType !== 1) { return; }
    if (node.classList.contains("static-tree")) { draw(node); }
    var boxes = node.getElementsByClassName("static-tree");
    for (var i = 0; i < boxes.length; i += 1) { draw(boxes[i]); }
  }

  window.hitboardStaticTree = { drawIn: drawIn };
  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      if (change.type === "attributes") { draw(change.target); }
      change.addedNodes.forEach(drawIn);
    });
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true,
                                         attributeFilter: ["data-tree"] });
})();
