"""The ``hitboard`` command: one module per command, each imported when its command runs
(``hitboard ingest`` starts without the modules that read frames with pandas)."""

import click

from .common import HitboardGroup

# Each command and the module of ``dashboard.cli`` defining it (in its ``COMMANDS``).
COMMAND_MODULES = {
    "report": "stats", "top": "stats", "preallocate": "stats", "indexes": "stats",
    "loadgen": "loadgen", "ingest": "ingest", "rollup": "ingest", "serve": "serve",
    "shard-plan": "shard", "shard": "shard", "breakdown": "dimensions",
    "visitors": "dimensions", "compact-visitors": "dimensions", "migrate": "store",
    "annotate": "annotate", "annotations": "annotate", "site": "site", "goals": "goals",
    "signin-link": "signin", "share": "share", "export": "transfer", "import": "transfer",
    "api-key": "apikey", "query": "query", "user": "users", "notify": "notify",
    "reports": "reports", "alerts": "alerts",
}


@click.group(cls=HitboardGroup, commands=COMMAND_MODULES)
@click.version_option(package_name="hitboard")
def main() -> None:
    """hitboard: real-time web-traffic dashboard on MongoDB."""
