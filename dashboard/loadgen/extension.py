"""The load generator's extension hook: one generator per server, and the demo when the
``demo`` setting asks for it. The controller knows nothing of the demo; this hook, called
by the app factory, wires the two."""

from __future__ import annotations

import click
import flask

from .control import EXTENSION_KEY, LoadGenerator
from .demo import console_progress, start_demo


def register_loadgen(server: flask.Flask, services) -> None:
    """Stopped before the recorder closes; with ``demo``, the demo starts before the first
    request is served."""
    generator = LoadGenerator(services.db, services.recorder,
                              readonly=services.settings.readonly,
                              max_rate=services.settings.loadgen_max_rate,
                              dimensions=services.dimensions)
    server.extensions[EXTENSION_KEY] = generator
    services.on_close(generator.close)
    if services.settings.demo:
        click.echo(start_demo(generator, progress=console_progress()), err=True)
