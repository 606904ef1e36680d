"""What every command shares: the ``--store`` option, user-facing error handling, and a
read's cells as printed.

Exit codes: 0 done; 1 partly done, run again to resume (``hitboard ingest``); 2 bad
input, or a store that cannot be reached or opened; 4 the store's disk is full (nothing
is lost or counted twice: free space, run the same command again)."""

from __future__ import annotations

import errno
import re
from importlib import import_module

import click
from pymongo.errors import PyMongoError

import queries
from dashboard.settings import Settings, resolve
from queries.validation import CONTROLS

BAD_INPUT, DISK_FULL = 2, 4
OUT_OF_DISK_SPACE = 14031       # MongoDB's code, which the embedded store uses too

store_option = click.option(
    "--store",
    default=None,
    metavar="URI|DIR",
    help="mongodb:// or mongodb+srv:// URI, or a directory for the embedded store "
    "(default: $HITBOARD_STORE, else $MONGODB_URI, else ~/.local/share/hitboard).",
)


_CONTROL = re.compile(f"[{CONTROLS}]")


def shown(text: str) -> str:
    """``text`` as the CLI writes it: every control character (C0, DEL, C1) and
    bidirectional override escaped as ``\\x9b`` or ``\\u202e``, so a name read from a store
    (an older one may hold them) never drives the terminal (U+009B begins a control
    sequence) or reorders a line."""
    return _CONTROL.sub(_escaped, text)


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class HitboardGroup(click.Group):
    """Loads a command's module when the command is asked for (``commands``: name ->
    module of ``dashboard.cli``, Click's lazy-loading pattern), and turns hitboard's
    errors into a one-line message and exit status 2."""

    def __init__(self, *args, commands: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.modules = commands

    def list_commands(self, ctx) -> list[str]:
        return sorted(self.modules)

    def get_command(self, ctx, name: str):
        if name not in self.modules:
            return None
        module = import_module(f"dashboard.cli.{self.modules[name]}")
        return next(command for command in module.COMMANDS if command.name == name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except queries.HitboardError as exc:
            click.echo(shown(f"Error: {exc}"), err=True)
            ctx.exit(BAD_INPUT)
        except (PyMongoError, OSError) as exc:
            click.echo(shown(f"Error: {store_trouble(exc)}"), err=True)
            ctx.exit(DISK_FULL if disk_full(exc) else BAD_INPUT)


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the store's disk is full (either store)."""
    return (getattr(exc, "code", None) == OUT_OF_DISK_SPACE
            or getattr(exc, "errno", None) == errno.ENOSPC
            or "disk is full" in str(exc) or "No space left" in str(exc))


def store_trouble(exc: BaseException) -> str:
    """A store failure in one line: what happened and what to do."""
    text = " ".join(str(exc).split())[:300]
    if disk_full(exc):
        return (f"the store's disk is full ({text}): nothing is lost or counted twice; "
                "free space, then run the same command again")
    if isinstance(exc, PermissionError):
        return f"permission denied: {exc.filename or text}"
    if isinstance(exc, PyMongoError):
        return f"the MongoDB server cannot be reached or refused: {queries.redact(text)}"
    return text


def command_settings(**explicit) -> Settings:
    """The settings of a command: its options (``None``: not given) over the
    environment and the defaults, resolved once (see ``dashboard.settings``)."""
    return resolve(explicit)


def open_db(store: str | None, read_only: bool = False):
    """Connect for a command; read-only commands can share a store a server holds."""
    return queries.connect(command_settings(store=store).store, read_only=read_only)


def present(value):
    """A cell of a read's frame as the CLI prints it: a plain Python value (numpy's
    scalars unwrapped), or ``None`` (an empty cell, ``null`` in JSON) where pandas counts
    it missing: ``None``, ``NaN``, ``NaT``, and the nullable dtypes' ``pd.NA``, whose
    truth raises ``TypeError`` (a page of the live hour counted before its raw event is
    written has ``<NA>`` visitors)."""
    if value is None:
        return None
    import pandas as pd  # here: ``hitboard ingest`` starts without it

    if pd.isna(value):
        return None
    return value.item() if hasattr(value, "item") else value


def whole(value) -> int | None:
    """A count, or ``None`` where it is missing (unknown, not zero)."""
    value = present(value)
    return None if value is None else int(value)


def records(frame) -> list[dict]:
    """A frame's rows as dicts of plain values, missing cells ``None``."""
    return [{key: present(value) for key, value in row.items()}
            for row in frame.astype(object).to_dict("records")]
