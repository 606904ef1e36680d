"""``hitboard ingest``: access logs into the statistics and events; ``hitboard rollup``.

The ingest runs in one process: its mapping's threads (Polars) use the cores, as many as
``--jobs`` says. Polars sizes its thread pool once, from POLARS_MAX_THREADS, when it is
first imported: the command sets it before importing the ingest's modules (``_threads``),
which is why those are imported in the command, not here.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

import click
from pymongo.errors import PyMongoError

import queries
from queries.errors import HitboardError
from queries.events.writer import WRITE_CONCERNS
from queries.ingest import gcmode
from queries.ingest.logformat import FORMATS
from queries.ingest.session import IngestBusyError
from queries.rollups.build import RollupRun, finish_rollups, run_rollups, start_rollups
from queries.rollups.parallel import RollupWorkers
from queries.stats.sites import UNKNOWN_AGENTS, set_unknown_agents, site_settings
from queries.store.connection import bulk_loading

from ..settings import size_engine_threads
from . import ingest_report
from .annotate import note_ingest
from .common import DISK_FULL, command_settings, disk_full, open_db, store_option, store_trouble


class _Stop:
    """SIGTERM and Ctrl-C set a flag; the command flushes what it read and stops."""

    def __init__(self):
        self.event = threading.Event()
        self.signal = None

    def __enter__(self):
        self._previous = {s: signal.signal(s, self._handle) for s in (signal.SIGTERM,
                                                                      signal.SIGINT)}
        return self

    def _handle(self, signum, _frame):
        self.signal = signum
        self.event.set()

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


@click.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, readable=True))
@click.option("--site", help="Site of every hit (default: the line's virtual host, "
              "else the file name without .log/.N/.gz). Named by its host "
              "(example.com), its own pages as referrers count as (internal).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Access-log format; auto recognises combined and common, with or "
              "without a virtual-host prefix.")
@click.option("--follow", is_flag=True, help="Keep reading as the files grow, across "
              "rotation (like tail -F); resumes where it stopped. Stop with SIGTERM/Ctrl-C.")
@click.option("--from-start", is_flag=True, help="Ingest the files from their first line "
              "again, counting lines already ingested a second time (by default a file "
              "is read on from where the last ingest of it stopped).")
@click.option("--no-events", is_flag=True, help="Count hits only; keep no raw events.")
@click.option("--write-concern", type=click.Choice(WRITE_CONCERNS), default=None,
              help="Write concern of event inserts on MongoDB (the embedded store "
              "journals every write). Hit counters always wait for acknowledgement.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Cores the ingest uses: the threads that map the lines and the "
              "processes that roll up a long log (default: $HITBOARD_INGEST_JOBS, else 2 "
              "on a machine with 2 cores or more).")
@click.option("--unknown-agents-as", "unknown_agents", type=click.Choice(UNKNOWN_AGENTS),
              default=None, help="Count hits without a user agent (a common-format log "
              "has none) as people or as bots; kept as the site's setting (default: the "
              "site's setting, else human).")
@store_option
def ingest(files, site, fmt, follow, from_start, no_events, write_concern, jobs,
           unknown_agents, store):
    """Read Apache/Nginx access logs: one hit per parsed line, plus raw events.

    Each line counts once, even if ingest is killed: a file is read on from where the
    last ingest of it stopped. Shows its progress on a terminal and prints a summary;
    exits 0 even when some lines are refused (the summary says why), 2 when no line
    parsed or a file is no access log (nothing written then), 1 when some hits or events
    could not be written (run the command again: it resumes).
    """
    # The summary and the error line say what went wrong; the writers' own log lines
    # (retries, what a closing recorder still held) would repeat it without context.
    logging.getLogger("queries").addHandler(logging.NullHandler())
    settings = command_settings(store=store, ingest_jobs=jobs)
    ingesting = _threads(settings.ingest_jobs)
    default_sites = {os.path.abspath(f): site or ingesting.site_from_filename(f)
                     for f in files}
    _refuse_what_is_no_log(default_sites, fmt)
    named = {site} if site else set(default_sites.values())
    unknown_agents = _unknown_agents(store, named, unknown_agents)
    db = open_db(store)
    started = ingest_report.clock()
    memory = ingest_report.TreeMemory()
    failure = rollups = None
    try:
        with memory, gcmode.bulk():
            queries.ensure_indexes(db)
            set_unknown_agents(db, named, unknown_agents)
            bulk_loading(db)
            ingestor = ingesting.Ingestor(db, site=site, format=fmt, events=not no_events,
                                          write_concern=write_concern,
                                          unknown_bots=unknown_agents == "bot")
            rollups = None if follow or no_events else _Rollups(db, settings)
            with _Stop() as stop:
                try:
                    if follow:
                        click.echo(f"following {len(files)} file(s); SIGTERM or Ctrl-C stops",
                                   err=True)
                        ingesting.follow(ingestor, list(default_sites), default_sites, stop.event,
                                         from_start=from_start)
                    else:
                        _batch(ingesting, ingestor, default_sites, stop.event, from_start,
                               None if rollups is None else rollups.start)
                except (HitboardError, PyMongoError) as exc:
                    failure = exc
                finally:
                    ingestor.close()
            if rollups is not None and failure is None and ingestor.summary.parsed:
                rollups.finish()
            if ingestor.summary.parsed:
                note_ingest(db, files, ingestor.summary)
    finally:
        if rollups is not None:     # its own processes, if any: a failed ingest skips finish()
            rollups.workers.close()
        db.client.close()
    if isinstance(failure, IngestBusyError) and not ingestor.summary.lines:  # only why not
        click.echo(f"Error: {failure}", err=True)
        sys.exit(1)
    summary = ingestor.summary
    for note in summary.notes:
        click.echo(note, err=True)
    ingest_report.print_summary(summary, ingest_report.clock() - started, memory.bytes())
    for warning in summary.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if failure is not None and disk_full(failure):
        click.echo(f"Error: {store_trouble(failure)}", err=True)
        sys.exit(DISK_FULL)
    if failure is not None:
        click.echo(f"Error: {failure}\nNothing is lost or counted twice: run the same command "
                   "again to resume.", err=True)
        sys.exit(1)
    if summary.parsed == 0 and not summary.apart and (
            summary.lines or summary.up_to_date < len(default_sites)):
        click.echo("Error: no line could be parsed (see 'refused' above)", err=True)
        sys.exit(2)
    if summary.unwritten or summary.warnings or (summary.events and summary.events.failed):
        sys.exit(1)
    if stop.signal is not None and not follow:
        sys.exit(128 + stop.signal)


def _unknown_agents(store: str | None, sites: set[str], chosen: str | None) -> str:
    """How this run counts hits without a user agent: as asked, else as the named sites'
    settings say (read before the workers fork)."""
    if chosen is not None:
        return chosen
    db = open_db(store, read_only=True)
    try:
        settings = {site_settings(db, name).unknown_agents for name in sites}
    finally:
        db.client.close()
    if len(settings) > 1:
        raise HitboardError("these sites count hits without a user agent differently: "
                            "ingest them apart, or say how with --unknown-agents-as")
    return settings.pop() if settings else "human"


def _threads(jobs: int):
    """The ingest's modules, imported once Polars is told to run ``jobs`` threads (it
    reads POLARS_MAX_THREADS once, when first imported; if something imported it before,
    it keeps the pool it has)."""
    size_engine_threads(jobs)
    from queries.ingest import run

    return run


def _refuse_what_is_no_log(default_sites: dict[str, str], fmt: str) -> None:
    """Stop, before anything is written, if a file is no access log at all."""
    from queries.ingest.sniff import not_a_log

    for path, default_site in default_sites.items():
        why = not_a_log(path, default_site, fmt)
        if why is not None:
            raise HitboardError(why)


class _Rollups:
    """The ingest's rollup run, so rollups hold the events just written at once (a
    running server's rollup job would within a minute; a repeated run rewrites the same
    buckets), in processes started when a level has many buckets to rewrite. It reads
    only events, so it starts as soon as the last file's lines are mapped: the rollups
    start while this process flushes the counters."""

    def __init__(self, db, settings):
        self.db, self.settings = db, settings
        self.workers = RollupWorkers(db, settings.store, db.name, settings.ingest_jobs)
        self.run: RollupRun | None = None

    def start(self) -> None:
        self.run = start_rollups(self.db, workers=self.workers)

    def finish(self) -> None:
        """Complete the run (all of it if no line was mapped before a stop) and say what
        it did."""
        with self.workers:
            if self.run is None:
                self.start()
            run = finish_rollups(self.db, self.run, self.settings.events_ttl_days,
                                 self.workers)
        hours = run.buckets.get("hourly", 0)
        click.echo(f"rollups: {hours:,} hour buckets rewritten ({run.duration_s:.2f} s)",
                   err=True)


def _batch(ingesting, ingestor, default_sites: dict[str, str], stop: threading.Event,
           from_start: bool, mapped) -> None:
    """Ingest each file in turn; ``mapped()`` once the last one's lines are mapped."""
    last = list(default_sites)[-1]
    for path, default_site in default_sites.items():
        if stop.is_set():
            return
        progress = ingest_report.Progress(os.path.basename(path), os.path.getsize(path))
        try:
            ingesting.ingest_file(ingestor, path, default_site, progress=progress.update,
                                  stop=stop.is_set, from_start=from_start,
                                  mapped=mapped if path == last else None)
        finally:
            progress.close()


@click.command()
@click.option("--every", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="Run again every SECONDS until SIGTERM/Ctrl-C (default: run once).")
@store_option
def rollup(every, store):
    """Roll the events up into hourly, daily, weekly, monthly and yearly buckets.

    Incremental: only buckets touched by events ingested since the last run are
    recomputed, completely, so a run repeated or interrupted never counts twice. Then
    the events read that are older than HITBOARD_EVENTS_TTL_DAYS leave.
    """
    db = open_db(store)
    try:
        queries.ensure_indexes(db)
        with _Stop() as stop:
            while True:
                run = run_rollups(db, retention=command_settings().events_ttl_days)
                buckets = ", ".join(f"{level} {n:,}" for level, n in run.buckets.items())
                merged = (f"; {run.sketches_merged:,} visitor sketch documents merged"
                          if run.sketches_merged else "")
                click.echo(f"rollup: events ingested since {run.since.isoformat()}: "
                           f"buckets rewritten: {buckets} ({run.duration_s:.2f} s){merged}")
                if every is None or stop.event.wait(every):
                    break
    finally:
        db.client.close()


COMMANDS = (ingest, rollup)
