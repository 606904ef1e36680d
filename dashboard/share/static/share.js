// A share page: its figures from the link's own data route (the token is in the path,
// so it travels with every request), Live refreshed every few seconds; a password
// link's form posts JSON to its unlock route, then the page opens.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("share-config").textContent);
  const alertBox = document.getElementById("share-alert");
  const say = (text) => { alertBox.textContent = text || ""; };

  function kpis(id, items) {
    const box = document.getElementById(id);
    if (!box) return;
    box.replaceChildren(...items.map((item) => {
      const card = document.createElement("div");
      card.className = "kpi";
      const label = document.createElement("div");
      label.className = "kpi-label";
      label.textContent = item.label;
      const value = document.createElement("div");
      value.className = "kpi-value";
      value.textContent = item.value;
      card.append(label, value);
      return card;
    }));
  }

  function draw(id, figure, options) {
    const box = document.getElementById(id);
    if (!box || !figure) return;
    const layout = Object.assign({}, figure.layout, {autosize: true});
    window.Plotly.react(box, figure.data, layout, options || {});
  }

  function cell(tag, text) {
    const node = document.createElement(tag);
    node.textContent = text;
    return node;
  }

  const COLUMN = {Pages: "Page", Referrers: "Referrer", Countries: "Country"};

  function tables(panels) {
    const box = document.getElementById("share-tables");
    if (!box || !panels) return;
    box.replaceChildren(...panels.tables.map((panel) => {
      const table = document.createElement("table");
      table.className = "panel";
      table.append(cell("caption", panel.title));
      const head = document.createElement("tr");
      head.append(cell("th", COLUMN[panel.title] || "Value"), cell("th", "Hits"));
      table.append(head);
      const rows = panel.rows.length ? panel.rows : [["none in this range", ""]];
      for (const [value, hits] of rows) {
        const row = document.createElement("tr");
        row.append(cell("td", value), cell("td", hits));
        table.append(row);
      }
      return table;
    }));
    document.getElementById("share-notes").textContent = panels.notes.join(" ");
  }

  function showLive(live) {
    if (!live) return;
    kpis("share-live-kpis", live.kpis);
    draw("share-live-graph", live.figure, live.config);
  }

  async function get(url) {
    const response = await fetch(url, {credentials: "same-origin",
                                       headers: {Accept: "application/json"}});
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
    return body;
  }

  async function load() {
    try {
      const body = await get(config.data);
      const history = body.history;
      document.getElementById("share-period").textContent = history.period;
      kpis("share-kpis", history.kpis);
      draw("share-history-graph", history.figure, history.config);
      tables(history.panels);
      showLive(body.live);
      document.body.dataset.loaded = "1";
    } catch (error) {
      say(error.message);
    }
    if (config.refresh_ms) {
      setInterval(async () => {
        if (document.hidden) return;
        try { showLive((await get(config.live)).live); say(""); }
        catch (error) { say(error.message); }
      }, config.refresh_ms);
    }
  }

  function lock() {
    document.getElementById("share-unlock").addEventListener("submit", async (event) => {
      event.preventDefault();
      const password = document.getElementById("share-password").value;
      const response = await fetch(config.unlock, {
        method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({password: password})});
      if (response.ok) { window.location.reload(); return; }
      const body = await response.json().catch(() => ({}));
      say(body.error || ("HTTP " + response.status));
    });
  }

  if (config.unlock) lock(); else load();
})();
