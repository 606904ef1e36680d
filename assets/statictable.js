/* Tables sent as one element's data (components/statictable.py): a div whose data-table
   holds the cells as JSON becomes a <table>, built with textContent (text, never
   markup). Dash's renderer pays for each element it adds with every element on the
   page, so the Data page's tables as hundreds of elements took seconds to appear. The
   div has no children of React's: React never touches the table; a new data-table
   redraws it. */
(function () {
  /* A path breaks after a "/" (<wbr>), never inside a name (at its hyphens): each name
     is kept whole (.path-name) unless longer than any line; the text copied is the
     path as it is. */
  var WHOLE_NAME = 40;
  function addText(el, line, path) {
    if (!path) { el.appendChild(document.createTextNode(line)); return; }
    line.split(/(?<=\/)/).forEach(function (part, i) {
      if (i) { el.appendChild(document.createElement("wbr")); }
      if (part.length > WHOLE_NAME) { el.appendChild(document.createTextNode(part)); return; }
      var name = document.createElement("span");
      name.className = "path-name";
      name.textContent = part;
      el.appendChild(name);
    });
  }

  function cell(tag, spec) {
    var el = document.createElement(tag);
    var path = / path-text( |$)/.test(" " + (spec.c || ""));
    (spec.t || []).forEach(function (line, i) {
      if (i) { el.appendChild(document.createElement("br")); }
      addText(el, line, path);
    });
    if (spec.h) {   // a note on a line of its own, in small type
      if (el.firstChild) { el.appendChild(document.createElement("br")); }
      var hint = document.createElement("span");
      hint.className = "hint";
      hint.textContent = spec.h;
      el.appendChild(hint);
    }
    if (spec.c) { el.className = spec.c; }
    if (spec.l) { el.setAttribute("data-label", spec.l); }
    if (spec.r) { el.rowSpan = spec.r; }
    if (spec.s) { el.colSpan = spec.s; }
    return el;
  }

  function draw(box) {
    var data = box.getAttribute("data-table");
    if (!data || box.__drawn === data) { return; }
    box.__drawn = data;
    var spec = JSON.parse(data);
    var table = document.createElement("table");
    table.className = spec.class || "";
    var head = table.createTHead().insertRow();
    spec.head.forEach(function (text) { head.appendChild(cell("th", { t: [text] })); });
    var body = table.createTBody();
    spec.rows.forEach(function (row) {
      var tr = body.insertRow();
      row.forEach(function (c) { tr.appendChild(cell("td", c)); });
    });
    box.replaceChildren(table);
  }

  function drawIn(node) {
    if (node.nodeType !== 1) { return; }
    if (node.matches(".static-table")) { draw(node); }
    node.querySelectorAll(".static-table").forEach(draw);
  }

  new MutationObserver(function (changes) {
    changes.forEach(function (change) {
      if (change.type === "attributes") { draw(change.target); }
      change.addedNodes.forEach(drawIn);
    });
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true,
                                         attributeFilter: ["data-table"] });
})();
