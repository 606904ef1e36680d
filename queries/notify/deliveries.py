"""Each send claimed once, logged, and retried: what makes workers and a cron safe together.

``notify.claims`` holds one unique ``_id`` per send (a report's site, period start and
recipient; an alert's incident, state and channel): the first to insert it sends, any
other gets ``taken``, as ``claim_demo_backfill`` does. ``notify.deliveries`` holds one
document per claimed send: what, to whom, its state (``sending``, ``sent``, ``queued``
for a retry at ``next_at``, ``failed``, ``unknown``), its attempts. A failed attempt is
retried after 1, 5 and 30 minutes, then the delivery is ``failed``; one still
``sending`` long after its attempt began was cut off (a killed process): ``unknown``,
never sent again, since it may have gone out.
"""

from __future__ import annotations

import datetime as dt
import email.policy
import email.utils
import json
import logging
from email.message import EmailMessage
from urllib.parse import urlsplit

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from .. import validation
from ..stats import schema
from .channels import ChannelError, channel_of, post_json, send_email

log = logging.getLogger(__name__)
CLAIMS = "notify.claims"
DELIVERIES = "notify.deliveries"
BACKOFF = (dt.timedelta(minutes=1), dt.timedelta(minutes=5), dt.timedelta(minutes=30))
CUT_OFF = dt.timedelta(minutes=10)      # far past every timeout of one attempt
STATES = ("sending", "sent", "queued", "failed", "unknown")
RETRIES_PER_RUN = 100


def ensure_notify_indexes(db) -> list[str]:
    return [db[DELIVERIES].create_index([("state", 1), ("next_at", 1)], name="state_next"),
            db[DELIVERIES].create_index([("site", 1), ("at", -1)], name="site_at"),
            db[DELIVERIES].create_index([("at", -1)], name="at")]


def claim(db, claim_id: str) -> bool:
    """True for the one caller that may send ``claim_id``; False when it is taken."""
    try:
        db[CLAIMS].insert_one({"_id": str(claim_id), "at": _now()})
    except DuplicateKeyError:
        return False
    return True


def deliver(services, *, claim_id: str, site: str, channel: str, to: str, subject: str,
            text: str, html: str | None = None, payload: dict | None = None,
            images: dict[str, bytes] | None = None, headers: dict[str, str] | None = None,
            secret: str | None = None) -> str:
    """Claim, send, log; "sent", "queued" (retried later), "taken", "failed" or
    "unknown". Never raises: a failing channel or store is logged, not passed on.
    ``headers``: extra email headers (``List-Unsubscribe``); ``secret``: the webhook's,
    else the one of the site's alert with that webhook."""
    db = services.db
    try:
        kind, target = channel_of(to)
        if channel not in ("email", "webhook") or channel != kind:
            raise ChannelError(f"{to[:100]!r} is not an address for {channel!r}")
        if not claim(db, claim_id):
            return "taken"
    except Exception as exc:
        log.error("delivery %s not claimed: %s", claim_id, exc)
        return "failed"
    now = _now()
    doc = {"_id": claim_id, "site": site, "channel": channel, "to": target,
           "subject": subject, "at": now, "attempt": 1, "state": "sending",
           "attempt_at": now, "tries": [],
           "message": {"text": text, "html": html, "payload": payload,
                       "images": images or {}, "headers": headers or {},
                       "secret": secret}}
    try:
        db[DELIVERIES].insert_one(doc)
    except Exception:
        log.exception("delivery %s claimed but not logged: not sent", claim_id)
        return "unknown"
    return _attempt(services, doc)


def _attempt(services, doc: dict) -> str:
    """One attempt of a delivery marked ``sending``; its outcome recorded."""
    error, final = "", False
    try:
        _send(services, doc)
    except ChannelError as exc:
        error = str(exc)
    except ValueError as exc:       # a header with CR/LF: no attempt can send it
        error, final = f"not sendable: {exc}"[:300], True
    except Exception as exc:        # a bad message or a bug: logged, retried like the rest
        log.exception("delivery %s failed", doc["_id"])
        error = f"{type(exc).__name__}: {exc}"[:300]
    attempt, now = doc["attempt"], _now()
    if not error:
        state, change = "sent", {"$unset": {"message": ""}}
    elif attempt <= len(BACKOFF) and not final:
        state, change = "queued", {"$set": {"next_at": now + BACKOFF[attempt - 1]}}
    else:
        state, change = "failed", {"$unset": {"message": ""}}
    change.setdefault("$set", {})["state"] = state
    change["$set"]["error"] = error
    change["$push"] = {"tries": {"at": now, "attempt": attempt,
                                 "result": "sent" if not error else "error", "error": error}}
    try:
        services.db[DELIVERIES].update_one({"_id": doc["_id"]}, change)
    except Exception:
        log.exception("delivery %s: outcome %s not recorded", doc["_id"], state)
        return "unknown"
    if error:
        log.warning("delivery %s to %s, attempt %d: %s (%s)", doc["_id"], doc["to"],
                    attempt, error, state)
    return state


def _send(services, doc: dict) -> None:
    message = doc["message"]
    if doc["channel"] == "email":
        if not services.settings.smtp_url:
            raise ChannelError("no SMTP server: set smtp_url (HITBOARD_SMTP_URL)")
        send_email(services.settings.smtp_url or "", _email(services.settings, doc))
        return
    body = message["payload"] if message.get("payload") is not None else {
        "text": message["text"]}
    secret = message.get("secret") or webhook_secret(services.db, doc["site"], doc["to"])
    post_json(doc["to"], json.dumps(body, separators=(",", ":")).encode(), secret)


def _email(settings, doc: dict) -> EmailMessage:
    message = doc["message"]
    return compose_email(settings, to=doc["to"], subject=doc["subject"],
                         text=message["text"], html=message.get("html"),
                         images=message.get("images"), headers=message.get("headers"),
                         at=validation.stored_time(doc["at"]))


def compose_email(settings, *, to: str, subject: str, text: str, html: str | None = None,
                  images: dict[str, bytes] | None = None,
                  headers: dict[str, str] | None = None,
                  at: dt.datetime | None = None) -> EmailMessage:
    """The message: plain text, HTML beside it, images inline (``cid:<name>``). Header
    values go through ``email.policy``: CR/LF in them is refused, others encoded."""
    mail = EmailMessage(policy=email.policy.SMTP)
    sender = mail_from(settings)
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = email.utils.format_datetime(at or _now())
    mail["Message-ID"] = email.utils.make_msgid("hitboard", sender.rpartition("@")[2])
    for name, value in (headers or {}).items():
        mail[name] = value
    mail.set_content(text)
    if html:
        mail.add_alternative(html, subtype="html")
        html_part = mail.get_payload()[1]
        for cid, data in (images or {}).items():
            html_part.add_related(bytes(data), "image", "png", cid=f"<{cid}>",
                                  disposition="inline", filename=f"{cid}.png")
    return mail


def mail_from(settings) -> str:
    """The ``mail_from`` setting, else ``hitboard@`` the public host."""
    if settings.mail_from:
        return settings.mail_from
    host = urlsplit(settings.public_url or "").hostname or "localhost"
    return f"hitboard@{host}"


def webhook_secret(db, site: str, url: str) -> str | None:
    """The secret of the site's alert that posts to ``url`` (None: sent unsigned)."""
    doc = db[schema.SITES].find_one({"_id": site}, {"alerts": 1}) or {}
    for alert in doc.get("alerts") or ():
        if isinstance(alert, dict) and alert.get("webhook") == url and alert.get("secret"):
            return alert["secret"]
    return None


def run_due(services, now: dt.datetime) -> int:
    """Mark deliveries cut off mid-send ``unknown``, retry those due; the retries run."""
    db = services.db
    db[DELIVERIES].update_many({"state": "sending", "attempt_at": {"$lt": now - CUT_OFF}},
                               {"$set": {"state": "unknown",
                                         "error": "cut off during its send: may have gone"}})
    done = 0
    while done < RETRIES_PER_RUN:
        doc = db[DELIVERIES].find_one_and_update(
            {"state": "queued", "next_at": {"$lte": now}},
            {"$set": {"state": "sending", "attempt_at": _now()}, "$inc": {"attempt": 1}},
            return_document=ReturnDocument.AFTER)
        if doc is None:
            break
        _attempt(services, doc)
        done += 1
    return done


def delivery_log(db, site: str | None = None, n: int = 50) -> list[dict]:
    """The last ``n`` deliveries (of ``site``), newest first: what, when, to whom, the
    attempt and its result."""
    query = {} if site is None else {"site": site}
    found = db[DELIVERIES].find(query, {"message": 0}).sort("at", -1).limit(max(int(n), 0))
    return [{"at": validation.stored_time(doc["at"]), "site": doc.get("site"),
             "channel": doc.get("channel"), "to": doc.get("to"),
             "subject": doc.get("subject"), "attempt": doc.get("attempt"),
             "result": doc.get("state"), "error": doc.get("error", "")} for doc in found]


def counts(db) -> dict[str, int]:
    """Deliveries per state that needs looking at: failed, unknown, queued."""
    return {state: db[DELIVERIES].count_documents({"state": state})
            for state in ("failed", "unknown", "queued")}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)
