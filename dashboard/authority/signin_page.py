"""The sign-in page: ``GET /signin`` (without a one-time ``code``) is plain HTML, no
Dash, asking for a name and password or the admin secret; its script posts JSON to
``POST /signin``, which sets the session cookie and answers where to go (``next``, a
path of this server). The page is the same for everyone: nothing from the request is
written into it (the script reads ``next`` from the address itself)."""

from __future__ import annotations

import base64
import hashlib

import flask

from .accounts import password_signin
from .guard import http_refusal
from .principal import typed_refusal, write_session

SCRIPT = """
const next = new URLSearchParams(location.search).get("next") || "/";
const asked = new URLSearchParams(next.split("?")[1] || "").get("theme");
const dark = asked ? asked === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
document.documentElement.dataset.theme = dark ? "dark" : "light";
for (const form of document.querySelectorAll("form")) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = document.getElementById("status");
    const body = {next};
    for (const field of form.querySelectorAll("input")) body[field.name] = field.value;
    status.textContent = "Signing in…";
    try {
      const answer = await fetch("/signin", {method: "POST", credentials: "same-origin",
        headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
      const data = await answer.json();
      if (answer.ok) { location.assign(data.next); return; }
      status.textContent = data.error || ("Refused (" + answer.status + ")");
    } catch (error) {
      status.textContent = "The server cannot be reached: " + error;
    }
  });
}
"""
STYLE = """
:root { --bg: #f6f7f9; --surface: #fff; --text: #212529; --muted: #6c757d; --border: #dee2e6;
        --accent: #3b5bdb; --on-accent: #fff; --error: #c92a2a; color-scheme: light; }
:root[data-theme="dark"] { --bg: #14161a; --surface: #1e2126; --text: #e9ecef;
        --muted: #adb5bd; --border: #343a40; --accent: #748ffc; --on-accent: #14161a;
        --error: #ffa8a8; color-scheme: dark; }
html { background: var(--bg); }
body { font: 15px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0;
       padding: 4rem 1rem; color: var(--text); }
main { max-width: 24rem; margin: 0 auto; padding: 1.2rem 1.5rem; background: var(--surface);
       border: 1px solid var(--border); border-radius: 10px; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; } .brand { color: var(--accent); }
label { display: block; margin: .8rem 0 .25rem; font-weight: 600; font-size: 14px; }
input { width: 100%; box-sizing: border-box; padding: .45rem .5rem; font: inherit;
        color: var(--text); background: var(--surface); border: 1px solid var(--border);
        border-radius: 6px; }
button { margin-top: 1rem; padding: .4rem 1rem; font: inherit; cursor: pointer;
         border-radius: 8px; border: 1px solid var(--accent); background: var(--accent);
         color: var(--on-accent); }
details { margin-top: 1.5rem; color: var(--muted); } summary { cursor: pointer; }
details label { font-weight: 400; color: var(--text); } code { font-size: .9em; }
#status { margin: .75rem 0 0; min-height: 1.25rem; color: var(--error); }
"""
PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · hitboard</title><style>{STYLE}</style></head>
<body><main>
<h1>Sign in to <span class="brand">hitboard</span></h1>
<form id="user-form">
  <label for="name">Name</label>
  <input id="name" name="name" autocomplete="username" required autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password"
         required>
  <button id="signin" type="submit">Sign in</button>
</form>
<details><summary>Sign in with the admin secret</summary>
<form id="secret-form">
  <label for="secret">HITBOARD_ADMIN_TOKEN, or a link <code>hitboard signin-link</code>
    printed</label>
  <input id="secret" name="secret" type="password" autocomplete="off" required>
  <button id="signin-secret" type="submit">Sign in</button>
</form></details>
<p id="status" role="status"></p>
</main><script>{SCRIPT}</script></body></html>
"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


POLICY = (f"default-src 'none'; script-src '{_hash(SCRIPT)}'; style-src '{_hash(STYLE)}'; "
          "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
           "Content-Security-Policy": POLICY, "X-Frame-Options": "DENY"}
FIELDS = frozenset({"name", "password", "secret", "next"})


def signin_page() -> flask.Response:
    response = flask.Response(PAGE, mimetype="text/html")
    response.headers.update(HEADERS)
    return response


def signin_post(local) -> flask.Response:
    """``{"name", "password"}`` or ``{"secret"}`` (the admin secret or a sign-in link),
    with ``next``: 200 ``{"next": path}`` and the cookie, or the refusal."""
    body = flask.request.get_json(silent=True)
    if not isinstance(body, dict) or set(body) - FIELDS or not all(
            isinstance(value, str) for value in body.values()):
        return _error(400, 'send {"name": ..., "password": ...} or {"secret": ...}, as text')
    if "secret" in body:
        refused, value = typed_refusal(body["secret"]), None
    else:
        refused, value = password_signin(body.get("name"), body.get("password"))
    if refused is not None:
        return http_refusal(refused)
    response = flask.jsonify(next=local(body.get("next")))
    response.headers.update(HEADERS)
    write_session(response, value)
    return response


def _error(status: int, reason: str) -> flask.Response:
    response = flask.jsonify(error=reason)
    response.status_code = status
    return response
