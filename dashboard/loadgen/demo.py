"""``hitboard serve --demo``: a first run that shows moving charts.

On a store without any statistics it backfills 30 days for two synthetic sites of 15
pages at 1 hit/s (2.6 million hits, with their dimensions and visitors: ~12 s on this
2-core machine, mostly classifying and counting 670,000 visits), once per database even if
several server processes start together, then, on any store, starts gentle live traffic
on those sites, unless a presenter's Stop is the generator's last command (remembered in
the database across restarts). Real sites are never touched: synthetic ones are
``*.example`` names registered as synthetic.
"""

from __future__ import annotations

import sys

import click

import queries
from queries.jobs.backfill import Progress
from queries.rollups.build import run_rollups
from queries.stats.generator_state import stopped_at
from queries.stats.goals import goal
from queries.stats.sites import add_goal, claim_demo_backfill, site_settings

from .control import Config, LoadGenerator

DEMO = Config(rate=1.0, sites=2, pages=15, zipf_s=1.1, diurnal=0.5, seed=0)
DEMO_DAYS = 30
DEMO_GOALS = (("event", "Purchase"), ("event", "Add to cart"), ("page", "/blog/*"))


def start_demo(generator: LoadGenerator, progress: Progress | None = None) -> str:
    """Backfill if the store is empty, start live traffic; returns what was done, for the
    console. Read-only servers get the reason instead."""
    reason = generator.disabled_reason
    if reason:
        return f"demo not started: {reason}"
    done = []
    if not queries.list_sites(generator.db) and claim_demo_backfill(generator.db):
        generator.backfill(DEMO_DAYS, DEMO, progress=progress, wait=True)
        state = generator.backfill_state
        if state.error:
            return f"demo backfill failed: {state.error}"
        done.append(f"backfilled {DEMO_DAYS} days ({state.hits:,} hits, {state.seconds:.1f} s)")
        run_rollups(generator.db)   # the rollups' first run: the badge compares from now on
    stopped = stopped_at(generator.db)
    if stopped is not None:
        done.append(f"live traffic left stopped (Stop pressed {stopped:%Y-%m-%d %H:%M} UTC; "
                    "Start on the Load generator page resumes it)")
        return "demo: " + "; ".join(done)
    generator.start(DEMO)
    _demo_goals(generator.db, generator.status().sites)
    sites = ", ".join(generator.status().sites)
    done.append(f"live traffic at {DEMO.rate:g} hits/s on {sites}")
    return "demo: " + "; ".join(done)


def _demo_goals(db, sites) -> None:
    """The goals the demo's custom events convert, on a demo site that has none (a
    presenter who removed some keeps the rest)."""
    for site in sites:
        if not site_settings(db, site).goals:
            for kind, value in DEMO_GOALS:
                add_goal(db, site, goal(kind, value))


def console_progress(label: str = "demo: backfilling history") -> Progress:
    """A progress callback drawing a bar on stderr, shown once there is progress to show."""
    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
        bar.update(done - bar.pos)
        if done >= total:
            bar.render_finish()

    return progress
