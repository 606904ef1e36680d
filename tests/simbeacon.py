"""The ``/hit`` beacon in a simulated schedule, through the Flask app's test client
(``dashboard.create_app``): its hit recorder, dimension recorder and event writer write
through the fault layer, flushed when the schedule says (their threads idle), the clock
(``time_machine``) moved across a UTC midnight and back. The truth: every hit answered
2xx counted once in the stats, the dimensions and the raw events.

A hit is answered once it is in the server's journal (``queries.journal``), whose
pipeline the schedule drives (its thread parked): a killed server (SIGKILL) leaves its
slot, which the next server takes and counts."""

from __future__ import annotations

import datetime as dt
import json
import random

import time_machine
from dashkit import dashboard_app, register_sites
from pymongo.errors import PyMongoError
from simkit import Backend, Faults
from simtruth import Hit, Ledger, Truth
from simwriters import PAGES, SITES, START, kill

from dashboard.services import get_services

AGENTS = {False: "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0",
          True: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}


class Parked:
    """An event writer's thread, stopped: the schedule flushes it."""

    @staticmethod
    def is_alive() -> bool:
        return True

    @staticmethod
    def join(timeout: float | None = None) -> None:
        return None


class Counting:
    """The app's journal pipeline, its thread parked: the schedule counts what it holds."""

    def __init__(self, journal):
        self.journal = journal

    def flush(self) -> None:
        journal = self.journal
        journal._hurry = True
        if journal._step(journal.slot, journal.writers) is None:
            raise PyMongoError(journal.last_error)


def _through_faults(services, db) -> list:
    """Point the app's journal pipeline at the fault layer, its thread parked; the
    writers the schedule flushes."""
    journal = services.journal
    journal._stop.set()
    journal._wake.set()
    journal._thread.join(5)
    journal._thread = Parked()
    journal._stop.clear()
    journal.db = db
    journal.writers.db = journal.writers.stats.db = db
    journal.writers.dims.db = journal.writers.dims.counts.db = db
    return [Counting(journal)]


def _killed(writers: list) -> None:
    """The server SIGKILLed: its journal's slot let go as it is, nothing flushed."""
    for counting in writers:
        journal = counting.journal
        kill(journal.writers.stats)
        kill(journal.writers.dims)
        journal._closed = True
        journal.slot.release()


def scenario(rng: random.Random, faults: Faults, backend: Backend, clock, outcome,
             tmp) -> Truth:
    note = faults.note
    answered: list[Hit] = []
    with time_machine.travel(START, tick=False) as traveller:
        app_context = dashboard_app(backend.where, rollup_interval=0, flush_interval=3600)
        app = app_context.__enter__()
        try:
            register_sites(app, *SITES)
            services = get_services(app.server)
            writers = _through_faults(services, backend.process())
            client = app.server.test_client()
            faults.armed = True
            for step in range(rng.randint(6, 20)):
                action = rng.choices(("hits", "flush", "restart", "clock", "full", "kill"),
                                     (8, 5, 1, 1, 1, 1))[0]
                if action == "hits":
                    n = rng.randint(1, 6)
                    statuses = []
                    for _ in range(n):
                        traveller.shift(dt.timedelta(seconds=rng.randrange(0, 40)))
                        bot, site, page = rng.random() < 0.2, rng.choice(SITES), rng.choice(PAGES)
                        answer = client.post("/hit", data=json.dumps({"site": site, "page": page}),
                                             content_type="text/plain",
                                             headers={"User-Agent": AGENTS[bot]})
                        statuses.append(answer.status_code)
                        if 200 <= answer.status_code < 300:
                            answered.append(Hit(site, page, dt.datetime.now(dt.UTC), bot))
                    note(f"{step}: {n} hits -> {statuses}")
                elif action == "flush":
                    writer = rng.choice(writers)
                    try:
                        writer.flush()
                        result = "written"
                    except PyMongoError as exc:
                        result = f"failed ({type(exc).__name__})"
                    note(f"{step}: flush {type(writer).__name__} -> {result}")
                elif action == "restart":
                    note(f"{step}: restart")
                    backend.restart()
                elif action == "clock":
                    traveller.move_to(START + dt.timedelta(seconds=rng.randrange(-300, 300)))
                    note(f"{step}: clock -> {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S}")
                elif action == "full":
                    faults.full_for = rng.randint(1, 6)
                    note(f"{step}: disk full for {faults.full_for} writes")
                else:
                    note(f"{step}: kill the server (SIGKILL), start it again")
                    _killed(writers)
                    app = app_context = None  # noqa: F841 - abandoned, as a killed process
                    app_context = dashboard_app(backend.where, rollup_interval=0,
                                                flush_interval=3600)
                    app = app_context.__enter__()
                    services = get_services(app.server)
                    writers = _through_faults(services, backend.process())
                    client = app.server.test_client()
            faults.armed, faults.full_for = False, 0
            note("heal: faults off, the server closed (its writers flush)")
        finally:
            app_context.__exit__(None, None, None)
    return Truth(stats=Ledger(acked=answered), dims=Ledger(acked=answered),
                 events=Ledger(acked=answered), values=False)
