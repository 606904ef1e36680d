"""The dashboard's views as a browser loads them, timed over HTTP: ``GET /``, the layout,
the shell's callback, the page's layout and its data callbacks (``bench/flood.py``)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
import urllib.request

from dash._utils import split_callback_id


class Callbacks:
    """The app's server-side callbacks (``/_dash-dependencies``), posted as a browser
    posts them: by one of their outputs, inputs given by ``id.prop``."""

    def __init__(self, port: int):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_dash-dependencies") as r:
            self.deps = [d for d in json.load(r) if not d.get("clientside_function")]

    def body(self, output: str, values: dict, changed: str) -> bytes:
        dep = next(d for d in self.deps if output in _bare_outputs(d["output"]))

        def props(items: list[dict]) -> list[dict]:
            return [{"id": i["id"], "property": i["property"],
                     "value": values.get(f"{i['id']}.{i['property']}")} for i in items]

        return json.dumps({"output": dep["output"], "outputs": split_callback_id(dep["output"]),
                           "inputs": props(dep["inputs"]), "state": props(dep["state"]),
                           "changedPropIds": [changed]}).encode()


def _bare_outputs(key: str) -> list[str]:
    inner = key[2:-2] if key.startswith("..") else key
    return [part.split("@")[0] for part in inner.split("...")]


def view_steps(callbacks: Callbacks, site: str) -> dict[str, list[tuple]]:
    """Each view's requests in a browser's order: (name, method, path, body)."""
    search = "?" + urllib.parse.urlencode({"site": site})
    post = "/_dash-update-component"

    def cb(output: str, values: dict, changed: str) -> bytes:
        return callbacks.body(output, {"url.search": search, **values}, changed)

    def page(path: str) -> bytes:
        return cb("_pages_content.children", {"_pages_location.pathname": path,
                                              "_pages_location.search": search},
                  "_pages_location.pathname")

    shell = [("GET /", "GET", "/" + search, None),
             ("layout", "GET", "/_dash-layout", None),
             ("shell (site dropdown)", "POST", post,
              cb("shell-site.options", {"shell-theme.value": "light"}, "url.search")),
             ("pages dropdown", "POST", post,
              cb("shell-pages.options", {"shell-site.value": site,
                                         "shell-pages.search_value": ""}, "shell-site.value"))]
    live_in = {"live-interval.n_intervals": 1, "live-recent-n.value": 20}
    return {
        "Live": shell + [
            ("live layout", "POST", post, page("/")),
            ("live graph+KPIs+top", "POST", post,
             cb("live-graph.figure", live_in, "live-interval.n_intervals")),
            ("live people+referrers", "POST", post,
             cb("live-people.children", live_in, "live-interval.n_intervals")),
            ("live recent hits", "POST", post,
             cb("live-recent.children", live_in, "live-interval.n_intervals")),
        ],
        "History": shell + [
            ("history layout", "POST", post, page("/history")),
            ("history graph", "POST", post, cb("history-graph.figure", {}, "url.search")),
            ("history KPIs+panels", "POST", post,
             cb("history-kpis.children", {}, "url.search")),
        ],
    }


def timed(port: int, method: str, path: str, body: bytes | None) -> tuple[float, int, int]:
    """(seconds, status, response bytes) of one request on a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    started = time.perf_counter()
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return time.perf_counter() - started, response.status, len(data)
    finally:
        connection.close()


def page_rounds(servers: list, site: str, rounds: int) -> dict[str, dict]:
    """Per server (each with ``name`` and ``port``), per view and step: the seconds of
    each round and the bytes."""
    steps = {s.name: view_steps(Callbacks(s.port), site) for s in servers}
    results = {s.name: {} for s in servers}
    for _ in range(rounds):
        for server in servers:
            for view, requests in steps[server.name].items():
                time.sleep(1.1)                      # a view loads past the 1 s caches
                for name, method, path, body in requests:
                    took, status, size = timed(server.port, method, path, body)
                    if status != 200:
                        raise SystemExit(f"{server.name}: {view} {name}: HTTP {status}")
                    entry = results[server.name].setdefault((view, name), {"s": [], "bytes": 0})
                    entry["s"].append(took)
                    entry["bytes"] = size
    return results


def site_options(port: int, site: str) -> int:
    """How many sites the shell's dropdown offers."""
    callbacks = Callbacks(port)
    body = callbacks.body("shell-site.options", {"url.search": f"?site={site}"}, "url.search")
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", "/_dash-update-component", body=body,
                           headers={"Content-Type": "application/json"})
        answer = json.loads(connection.getresponse().read())
    finally:
        connection.close()
    return len(answer["response"]["shell-site"]["options"])
