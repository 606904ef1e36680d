"""``hitboard ingest`` in a simulated schedule, in process (its Python entry:
``Ingestor`` with ``ingest_file``, batch, or ``follow``): runs that fail, runs killed at
any call (``simkit.Killed``: nothing of the run's cleanup writes), the log growing
between and during runs, late lines for hours already counted. Each run is a new
simulated process. The truth: once a run ends with the whole file read, every line of
it counted once (its hit, its dimensions' hit, its raw event)."""

from __future__ import annotations

import datetime as dt
import random

import time_machine
from pymongo.errors import PyMongoError
from simkit import Backend, Faults, Killed
from simtruth import Hit, Ledger, Truth
from simwriters import START

from queries.errors import HitboardError
from queries.ingest.run import Ingestor, follow, ingest_file
from queries.rollups.build import SETTLE, run_rollups
from queries.stats import schema

SITE = "logs"
WALL = START + dt.timedelta(hours=3)      # when the runs happen
AGENTS = {False: "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0",
          True: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}


class Log:
    """The access log on disk and the hits of its lines."""

    def __init__(self, path, rng: random.Random):
        self.path, self.rng = path, rng
        self.hits: list[Hit] = []
        self.lines: list[str] = []
        self.now = START - dt.timedelta(minutes=3)
        path.write_text("")

    def append(self, n: int) -> None:
        lines = []
        for _ in range(n):
            self.now += dt.timedelta(seconds=self.rng.randrange(0, 30))
            ts = self.now
            if self.rng.random() < 0.1:          # late: an hour already counted
                ts -= dt.timedelta(hours=self.rng.choice((1, 2)))
            bot = self.rng.random() < 0.2
            page = f"/p{self.rng.randrange(5)}"
            self.hits.append(Hit(SITE, page, ts, bot))
            lines.append(f'10.0.0.{self.rng.randrange(1, 9)} - - [{ts:%d/%b/%Y:%H:%M:%S} '
                         f'+0000] "GET {page} HTTP/1.1" 200 512 "-" "{AGENTS[bot]}"\n')
        self.lines += [line.rstrip("\n") for line in lines]
        with self.path.open("a") as log:
            log.writelines(lines)


class Stop:
    """``follow``'s stop event, driven by the schedule: it reports set after ``polls``
    looks, never waits (so a follow is as deterministic as a batch run), and appends
    the log's lines planned for some of its looks."""

    def __init__(self, polls: int, log: Log, appends: dict[int, int]):
        self.polls, self.log, self.appends, self.looks = polls, log, appends, 0

    def is_set(self) -> bool:
        self.looks += 1
        if self.looks in self.appends:
            self.log.append(self.appends[self.looks])
        return self.looks > self.polls

    def wait(self, timeout: float | None = None) -> bool:
        return self.is_set()


def _run(backend: Backend, log: Log, mode: str, rng: random.Random) -> str:
    """One run of ``hitboard ingest`` as a new process; what became of it."""
    ingestor = Ingestor(backend.process(), site=SITE)
    try:
        return _ingest(ingestor, log, mode, rng)
    except Killed:
        return "killed"
    finally:
        # The process has exited: its claim on the checkpoint lapses (its process id
        # no longer runs), whether its last write, letting it go, reached the store.
        backend.db[schema.CHECKPOINTS].update_many({}, {"$set": {"process": None}})


def _ingest(ingestor: Ingestor, log: Log, mode: str, rng: random.Random) -> str:
    try:
        if mode == "follow":
            appends = {rng.randrange(1, 12): rng.randint(1, 8) for _ in range(2)}
            follow(ingestor, [str(log.path)], {str(log.path): SITE},
                   Stop(rng.randint(2, 12), log, appends), poll=0.0, flush_every=0.0)
        else:
            ingest_file(ingestor, log.path, SITE)
        ingestor.close()
        return "ended"
    except PyMongoError as exc:
        ingestor.close()
        return f"failed: store ({type(exc).__name__})"
    except HitboardError as exc:
        ingestor.close()
        if "events could not be written" in str(exc):   # the store's failure, told
            return f"failed: store (events: {type(exc).__name__})"
        return f"failed: {type(exc).__name__}: {exc}"


def _rollup(backend: Backend) -> str:
    """A rollup run (the server's job, ``hitboard rollup``) as a process of its own."""
    try:
        run_rollups(backend.process())
        return "ended"
    except Killed:
        return "killed"
    except PyMongoError as exc:
        return f"failed: store ({type(exc).__name__})"


def scenario(rng: random.Random, faults: Faults, backend: Backend, clock, outcome,
             tmp) -> Truth:
    # The wall clock the writers stamp events with and rollups read: forward by steps,
    # now and then back by less than the rollups' SETTLE (hosts a little apart).
    with time_machine.travel(WALL, tick=False) as traveller:
        truth = _schedule(rng, faults, backend, outcome, tmp, traveller)
        traveller.move_to(dt.datetime.now(dt.UTC) + 2 * SETTLE)
        faults.note("heal: a rollup run")
        assert _rollup(backend) == "ended"
    return truth


def _schedule(rng, faults, backend, outcome, tmp, traveller) -> Truth:
    latest = WALL
    log = Log(tmp / "access.log", rng)
    note = faults.note
    faults.armed = True
    for step in range(rng.randint(4, 12)):
        # Never further back than 20 s from the latest instant seen (within SETTLE):
        # a clock further behind a rollup run's watermark is the rollups' documented
        # limit, not a fault they survive.
        latest += dt.timedelta(seconds=rng.choice((5, 20, 60, 0)))
        traveller.move_to(latest - dt.timedelta(seconds=rng.choice((0, 0, 0, 20))))
        action = rng.choices(("append", "batch", "follow", "kill", "restart", "full",
                              "rollup"), (4, 4, 2, 2, 1, 1, 2))[0]
        if action == "append":
            n = rng.randint(1, 40)
            note(f"{step}: append {n} lines")
            log.append(n)
        elif action == "rollup":
            if rng.random() < 0.3:
                faults.kill_in = rng.randint(1, 20)
            killed = f" (killed at call {faults.kill_in})" if faults.kill_in else ""
            note(f"{step}: rollup run{killed}")
            note(f"  -> {_rollup(backend)}")
            faults.kill_in = None
        elif action in ("batch", "follow", "kill"):
            mode = action if action != "kill" else rng.choice(("batch", "follow"))
            if action == "kill":
                faults.kill_in = rng.randint(1, 40)
            killed = f", killed at call {faults.kill_in}" if action == "kill" else ""
            note(f"{step}: ingest ({mode}{killed})")
            result = _run(backend, log, mode, rng)
            note(f"  -> {result}")
            faults.kill_in = None
            if not result.startswith(("ended", "killed", "failed: store")):
                outcome.problems.append(f"step {step}: the run stopped on {result}, not "
                                        "on the store's failure")
        elif action == "restart":
            note(f"{step}: restart")
            backend.restart()
        else:
            faults.full_for = rng.randint(1, 6)
            note(f"{step}: disk full for {faults.full_for} writes")
    faults.armed, faults.full_for = False, 0
    note("heal: faults off, one batch run to the end of the file")
    result = _run(backend, log, "batch", rng)
    assert result == "ended", f"the healing run {result}"
    return Truth(stats=Ledger(acked=log.hits), dims=Ledger(acked=log.hits),
                 events=Ledger(acked=log.hits), values=False,
                 rollups=Ledger(acked=log.hits), visits=(SITE, log.lines))
