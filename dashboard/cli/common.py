"""What every command shares: the ``--store`` option and user-facing error handling."""

from __future__ import annotations

from importlib import import_module

import click

import queries
from dashboard.settings import Settings, resolve

store_option = click.option(
    "--store",
    default=None,
    metavar="URI|DIR",
    help="mongodb:// or mongodb+srv:// URI, or a directory for the embedded store "
    "(default: $HITBOARD_STORE, else $MONGODB_URI, else ~/.local/share/hitboard).",
)


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
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(2)


def command_settings(**explicit) -> Settings:
    """The settings of a command: its options (``None``: not given) over the
    environment and the defaults, resolved once (see ``dashboard.settings``)."""
    return resolve(explicit)


def open_db(store: str | None, read_only: bool = False):
    """Connect for a command; read-only commands can share a store a server holds."""
    return queries.connect(command_settings(store=store).store, read_only=read_only)
