"""hitboard's settings, declared once: name, environment variable, default, help.

This is the only module that reads the environment: the app factory, the CLI and the
benches resolve settings here and hand ``queries/`` explicit values (a test checks).
Each value resolves as explicit argument > ``HITBOARD_*`` environment variable > default,
the way Datasette does. The CLI passes its options as explicit arguments (``None`` means
"not given"), so ``hitboard serve --port 9000`` beats ``HITBOARD_PORT`` which beats 8050.
Add a feature's setting as one more row of ``SETTINGS``; it is then available everywhere
as ``settings.<name>`` (for instance ``get_services().settings.<name>`` in a callback).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from queries.errors import HitboardError
from queries.notify.channels import check_address, smtp_server


class InvalidSettingError(HitboardError):
    """A setting's value cannot be used (bad number, unknown name...)."""


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"expected true/false, got {text!r}")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(f"must be 0 or more, got {value}")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise ValueError(f"a port is between 0 and 65535, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise ValueError(f"must be positive, got {value}")
    return value


def _optional_text(text: str) -> str | None:
    return text or None


def _public_url(text: str) -> str | None:
    """An http(s) address without query or fragment, kept without its trailing slash."""
    if not text:
        return None
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected http(s)://host[:port], got {text!r}")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"a public address has no query, fragment or password: {text!r}")
    parts.port  # noqa: B018 -- raises ValueError on a port out of range
    return text.strip().rstrip("/")


def _smtp_url(text: str) -> str | None:
    """``smtp://[user:pass@]host[:port]`` or ``smtps://...``; another scheme is refused."""
    if not text:
        return None
    smtp_server(text.strip())
    return text.strip()


def _mail_from(text: str) -> str | None:
    return check_address(text) if text else None


_SIZE = re.compile(r"\s*(\d+)\s*(?:([KM])(?:I?B)?)?\s*", re.IGNORECASE)


def _byte_size(text: str) -> int:
    """A size in bytes: ``8192``, ``8K`` or ``4M`` (K and M count by 1,024)."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"expected bytes, e.g. 8192, 8K or 4M, got {text!r}")
    value = int(match[1]) * {"": 1, "K": 1024, "M": 1024 ** 2}[(match[2] or "").upper()]
    if value < 1:
        raise ValueError(f"must be at least 1 byte, got {text!r}")
    return value


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    parse: Callable[[str], Any] = str

    @property
    def env(self) -> str:
        return f"HITBOARD_{self.name.upper()}"


SETTINGS: tuple[Setting, ...] = (
    Setting("store", None, "mongodb:// URI or embedded store directory (unset: $MONGODB_URI, "
            "else $XDG_DATA_HOME/hitboard, else ~/.local/share/hitboard)", _optional_text),
    Setting("database", "hitboard", "database name on a MongoDB server"),
    Setting("host", "127.0.0.1", "interface `hitboard serve` listens on"),
    Setting("port", 8050, "TCP port `hitboard serve` listens on", _port),
    Setting("workers", 1, "server processes",
            _positive_int),
    Setting("threads", 8, "threads per server process running pages and Dash callbacks "
            "(/hit and /healthz have as many of their own)", _positive_int),
    Setting("connections", 1000, "connections a server process holds at once; more wait "
            "in the listen queue", _positive_int),
    Setting("header_timeout", 10.0, "seconds a client has to send a request's line and "
            "headers once it has begun, and an idle connection to begin; then it is "
            "closed", _positive_float),
    Setting("body_timeout", 30.0, "seconds a client has to send a request's body once its "
            "headers are in; then it gets a 408", _positive_float),
    Setting("request_wait", 5.0, "seconds a request of /hit's lane (/hit, /healthz, the "
            "reading of any request) may be in flight before /healthz answers 503",
            _positive_float),
    Setting("beacon_max_body", 16 * 1024, "largest /hit body, in bytes (8K, 1M...); a "
            "larger one is refused with 413 before it is read", _byte_size),
    Setting("callback_max_body", 4 * 1024 ** 2, "largest Dash callback body, in bytes "
            "(History posts its CSV back to download it: 3.4 MB at most)", _byte_size),
    Setting("max_body", 1024 ** 2, "largest body any other address accepts, in bytes",
            _byte_size),
    Setting("readonly", False, "never write: no hit recorder, embedded store opened read-only",
            _boolean),
    Setting("hide_synthetic", False, "leave the load generator's synthetic sites out of the "
            "site selector (shown, they are labelled 'synthetic')", _boolean),
    Setting("flush_interval", 1.0, "seconds between hit-recorder flushes", _positive_float),
    Setting("journal", None, "directory of the /hit journal, where a hit is written before "
            "it is answered (unset: the embedded store's hit-journal/ folder; for a MongoDB "
            "store, one per store under $XDG_DATA_HOME/hitboard/journal)"),
    Setting("journal_sync", False, "fdatasync each group of /hit records before answering "
            "(survives a power cut, not only a killed process)", _boolean),
    Setting("cache_seconds", 60, "historical results are shared by all viewers for this "
            "many seconds", _positive_int),
    Setting("cache_max_bytes", 64 * 1024 ** 2, "bytes the shared results of a server "
            "process hold at most (64M, 512M...), least recently used evicted first: a "
            "stranger's distinct views cannot outgrow it", _byte_size),
    Setting("demo", False, "on an empty store backfill 30 days of synthetic traffic, then "
            "generate gentle live traffic (`hitboard serve --demo`)", _boolean),
    Setting("loadgen_max_rate", 20_000, "highest rate (hits/s) the load generator page "
            "accepts, spikes included (at most 20,000)", _positive_int),
    Setting("live_cache_seconds", 1, "live-page results are shared by all viewers for this "
            "many seconds", _positive_int),
    Setting("beacon_sites", None, "comma-separated `site` or `site=origin` entries the /hit "
            "beacon accepts, registered at start (unset: the registered sites, from their "
            "origins: `hitboard site add`)", _optional_text),
    Setting("beacon_new_sites", 0, "sites a first /hit may register, per hour (0: none, "
            "sites are registered by `hitboard site add`, ingest, the load generator or "
            "beacon_sites)", _non_negative_int),
    Setting("beacon_pages_per_day", 10_000, "new pages a site may get through /hit per UTC "
            "day; the hits of pages past it count under the page `/(other)`",
            _positive_int),
    Setting("beacon_unseen_pages", 100, "pages the site never had (no hit this month or "
            "last) that get their own name from their first /hit, per UTC day and server "
            "process; past it such a page gets its own name at its second hit, its first "
            "counted under `/(other)` (a flood of made-up pages, each sent once, stores "
            "nothing of its own)", _non_negative_int),
    Setting("rollup_interval", 60, "seconds between the server's rollup runs (0: never; "
            "`hitboard rollup` can run them instead)", _non_negative_int),
    Setting("notify_interval", 60, "seconds between the server's runs of due "
            "notifications: reports, alerts, retries (0: never; `hitboard notify run` can "
            "run them instead)", _non_negative_int),
    Setting("smtp_url", None, "the mail server reports and alerts go through: "
            "smtp://[user:pass@]host[:port] (STARTTLS when offered, required with "
            "credentials) or smtps://... (TLS from the start)", _smtp_url),
    Setting("mail_from", None, "the sender of reports and alerts (unset: hitboard@ the "
            "public host)", _mail_from),
    Setting("ingest_jobs", min(2, os.cpu_count() or 1), "threads `hitboard ingest` maps "
            "a log's lines with (Polars'; the ingest is one process)", _positive_int),
    Setting("events_ttl_days", 30, "days raw events are kept after ingestion, and until "
            "the rollups have read them",
            _positive_int),
    Setting("admin_token", None, "the admin secret every state change needs (sign-in "
            "link, or `Authorization: Bearer`); unset, `hitboard serve` makes one at start "
            "and prints its sign-in link", _optional_text),
    Setting("open_admin", False, "UNSAFE: let anyone who reaches the server change its "
            "state (load generator, rollups, notes, sites) without signing in", _boolean),
    Setting("public_url", None, "the server's public address (https://stats.example.com): "
            "the origin writes may come from besides the request's own, and the base of "
            "the links it prints", _public_url),
    Setting("trusted_proxies", 0, "reverse proxies in front of the server whose "
            "X-Forwarded-For/-Proto/-Host headers are believed (0: none)", _non_negative_int),
)


class Settings(Mapping):
    """Resolved settings, read as attributes (``settings.port``) or as a mapping."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"no setting named {name!r}") from None

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Settings({self._values!r})"


def resolve(explicit: Mapping[str, Any] | None = None,
            environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from explicit values (``None`` = not given), else the environment, else
    the defaults. Unknown names and unparsable values raise :class:`InvalidSettingError`."""
    explicit = dict(explicit or {})
    environ = os.environ if environ is None else environ
    known = {s.name: s for s in SETTINGS}
    unknown = sorted(set(explicit) - set(known))
    if unknown:
        raise InvalidSettingError(
            f"unknown setting(s) {', '.join(unknown)}: known are {', '.join(known)}"
        )
    values = {}
    for setting in SETTINGS:
        given = explicit.get(setting.name)
        if given is not None:
            values[setting.name] = _coerce(setting, given, "argument")
        elif setting.env in environ:
            values[setting.name] = _coerce(setting, environ[setting.env], setting.env)
        else:
            values[setting.name] = setting.default
    if values["store"] is None:
        values["store"] = environ.get("MONGODB_URI") or str(_default_store_dir(environ))
    if values["journal"] is None:
        values["journal"] = str(_journal_dir(values["store"], values["database"], environ))
    return Settings(values)


def _journal_dir(store: str, database: str, environ: Mapping[str, str]) -> Path:
    """The embedded store's own folder, or one per MongoDB store and database."""
    if not store.startswith(("mongodb://", "mongodb+srv://")):
        return Path(store) / "hit-journal"
    key = hashlib.sha256(f"{store}\0{database}".encode()).hexdigest()[:16]
    return _default_store_dir(environ) / "journal" / key


def _default_store_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "hitboard"


def env_name(name: str) -> str:
    """The environment variable of the setting ``name`` (for messages and pages)."""
    return next(s.env for s in SETTINGS if s.name == name)


def _coerce(setting: Setting, value: Any, source: str) -> Any:
    if not isinstance(value, str):
        value = str(value).lower() if isinstance(value, bool) else str(value)
    try:
        return setting.parse(value)
    except ValueError as exc:
        raise InvalidSettingError(f"invalid {setting.name} from {source}: {exc}") from None


def describe() -> list[tuple[str, str, str, str]]:
    """(name, environment variable, default, help) per setting, for docs and ``--help``."""
    return [(s.name, s.env, "" if s.default is None else str(s.default), s.help)
            for s in SETTINGS]


def size_engine_threads(threads: int) -> None:
    """Polars sizes its thread pool once, from ``POLARS_MAX_THREADS``, when it is first
    imported: set here before that (a process that imported it already keeps its pool)."""
    if "polars" not in sys.modules:
        os.environ["POLARS_MAX_THREADS"] = str(threads)
