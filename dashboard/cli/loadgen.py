"""``hitboard loadgen``: backfill history and/or generate live synthetic traffic."""

from __future__ import annotations

import time

import click

import queries
from queries.counting import DimensionRecorder
from queries.events.writer import EventWriter
from queries.jobs.backfill import MAX_DAYS
from queries.loadgen import LoadRunner, TrafficModel, backfill_history
from queries.loadgen.events import EventFeed
from queries.loadgen.runner import MAX_RATE, check_rate

from .common import open_db, store_option


@click.command()
@click.option("--rate", type=float, default=100.0, show_default=True,
              help=f"Target hits/s over all sites (1 to {MAX_RATE:,}); a daily mean when the "
              "diurnal cycle is on. Also the mean rate of the backfilled history.")
@click.option("--duration", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Seconds of live traffic; 0 to only backfill.")
@click.option("--sites", type=int, default=2, show_default=True, help="Number of sites.")
@click.option("--pages", type=int, default=15, show_default=True, help="Pages per site.")
@click.option("--zipf", "zipf_s", type=float, default=1.1, show_default=True,
              help="Zipf exponent of page popularity (0 = all pages equally popular).")
@click.option("--diurnal", type=float, default=0.5, show_default=True,
              help="Amplitude of the daily cycle, from 0 (flat) to 0.99.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Same seed, same sites, pages and traffic.")
@click.option("--events/--no-events", default=True, show_default=True,
              help="Also write one raw event per live hit (the events collection).")
@click.option("--backfill-days", type=click.IntRange(0, MAX_DAYS), default=0, show_default=True,
              help="Write this many days of history first (pre-aggregated, not hit by hit).")
@store_option
def loadgen(rate, duration, sites, pages, zipf_s, diurnal, seed, events, backfill_days, store):
    """Generate synthetic traffic into sites registered as synthetic (*.example)."""
    model = TrafficModel(sites=sites, pages=pages, zipf_s=zipf_s, diurnal=diurnal, seed=seed)
    check_rate(rate)
    db = open_db(store)
    try:
        queries.ensure_indexes(db)
        queries.register_synthetic(db, model.site_names)
        click.echo(f"sites: {', '.join(model.site_names)} ({pages} pages each)")
        if backfill_days:
            _backfill(db, model, rate, backfill_days)
        if duration:
            _run(db, model, rate, duration, events)
    finally:
        db.client.close()


def _backfill(db, model, rate, days) -> None:
    started = time.perf_counter()
    with click.progressbar(length=(days + 1) * model.sites, label="backfill",
                           show_pos=True) as bar:
        def progress(done, _total):
            bar.update(done - bar.pos)

        with DimensionRecorder(db) as dimensions:
            totals = backfill_history(db, model, rate, days, progress=progress,
                                      dimensions=dimensions)
    click.echo(f"backfilled {days} days + today: {totals.hits:,} hits in "
               f"{totals.new_documents:,} new documents + {totals.updated_documents:,} updates, "
               f"{time.perf_counter() - started:.1f} s")


def _run(db, model, rate, duration, events: bool) -> None:
    recorder = queries.HitRecorder(db)
    dimensions = DimensionRecorder(db)
    writer = EventWriter(db, flush_interval=1.0) if events else None
    runner = LoadRunner(recorder, model, rate, dimensions=dimensions,
                        events=EventFeed(writer, model.seed) if writer else None)
    runner.start()
    end = time.monotonic() + duration
    try:
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(1.0, left))
            s = runner.status()
            click.echo(f"target {s.target_now:>9,.0f}/s  achieved {s.achieved:>9,.0f}/s  "
                       f"sent {s.hits_sent:>11,}  pending {s.pending_hits:>7,}  "
                       f"db ops {s.db_operations_per_s:>6,.0f}/s  errors {s.errors}")
    finally:
        runner.stop()
        recorder.close()
        dimensions.close()
        if writer is not None:
            writer.close()
    s = runner.status()
    written = recorder.status()
    click.echo(f"sent {s.hits_sent:,} hits (expected {s.expected_hits:,.0f}), "
               f"written {written.hits_written:,}, errors {s.errors + written.refused}")
    if writer is not None:
        click.echo(f"raw events written {writer.totals.written:,}, failed {writer.totals.failed:,}")


COMMANDS = (loadgen,)
