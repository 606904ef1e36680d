"""One simulated schedule from its seed: the scenario (which writers), the backend, the
steps (hits, flushes, kills, restarts, a full disk, clock jumps) and the faults of each
call all drawn from ``random.Random(seed)``; then the faults stop, every living writer
writes what it holds, and the checker compares the store with the truth.

``run(seed, tmp)`` returns an :class:`Outcome`; its ``report()`` is what a failing test
prints: the seed, how to replay it, every step and fault, and the problems."""

from __future__ import annotations

import datetime as dt
import random
import traceback
from dataclasses import dataclass, field

import simbeacon
import simingest
from simkit import Backend, Faults
from simtruth import Hit, Ledger, Truth, check
from simwriters import PAGES, SITES, CountedHits, SimClock, Tap, recorders

from queries.counting import HitRecorder
from queries.dimensions.sketching import IS_BOT
from queries.loadgen.model import TrafficModel
from queries.loadgen.runner import LoadRunner

REFERRERS = ("(direct)", "news.example", "search.example")
IS_HUMAN = (IS_BOT[0], "human")


@dataclass
class Outcome:
    seed: int
    scenario: str = ""
    backend: str = ""
    steps: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    faults: int = 0

    def report(self) -> str:
        return "\n".join([
            f"seed {self.seed} ({self.scenario} on {self.backend}, {self.faults} faults): "
            f"replay with HITBOARD_SIM_SEED={self.seed} "
            f"{'HITBOARD_SIM_BACKEND=embedded ' if self.backend == 'embedded' else ''}"
            "pytest tests/test_simulation.py -k test_schedule",
            "steps:", *self.steps, "problems:", *self.problems])


def _hit(rng: random.Random, clock: SimClock) -> Hit:
    clock.tick(rng)
    ts = clock.now
    if rng.random() < 0.15:           # a late line: an hour (or a day) already rolled up
        ts -= dt.timedelta(hours=rng.choice((1, 2, 25)))
    bot = rng.random() < 0.2
    dims = (("referrer", rng.choice(REFERRERS)), ("status", "200"),
            ("browser", rng.choice(("Firefox", "Chrome"))), IS_BOT if bot else IS_HUMAN)
    return Hit(rng.choice(SITES), rng.choice(PAGES), ts, bot, dims)


def _recorders(rng, faults, backend, clock, outcome, tmp) -> Truth:
    truth = Truth(stats=Ledger(), dims=Ledger(), events=Ledger())
    writers = recorders(backend, clock, truth, rng)
    copies = len(writers) // 3
    note = faults.note
    note(f"  {copies} copies of (HitRecorder, DimensionRecorder, EventWriter)")
    faults.armed = True
    for step in range(rng.randint(6, 24)):
        action = rng.choices(("hits", "flush", "kill", "restart", "clock", "full"),
                             (8, 6, 1, 1, 1, 1))[0]
        if action == "hits":
            copy = rng.randrange(copies)
            hits = [_hit(rng, clock) for _ in range(rng.randint(1, 6))]
            note(f"{step}: {len(hits)} hits into copy {copy}")
            for hit in hits:
                for writer in writers[3 * copy:3 * copy + 3]:
                    writer.take(hit)
        elif action == "flush":
            writer = rng.choice(writers)
            note(f"{step}: flush {type(writer.writer).__name__} #{writers.index(writer)}")
            note(f"  -> {'acknowledged' if writer.flush() else 'failed'}")
        elif action == "kill":
            writer = rng.choice(writers)
            note(f"{step}: kill {type(writer.writer).__name__} #{writers.index(writer)} "
                 f"holding {len(writer.taken)}, start a new one")
            writer.kill_and_restart()
        else:
            _store_fault(action, step, rng, faults, backend, clock)
    faults.armed, faults.full_for = False, 0
    note("heal: faults off, every writer closed")
    for writer in writers:
        writer.heal()
    return truth


def _store_fault(action: str, step: int, rng, faults, backend, clock) -> None:
    """The steps every scenario shares: the store restarted, the clock jumping, the
    disk full for a few writes."""
    note = faults.note
    if action == "restart":
        note(f"{step}: restart")
        backend.restart()
    elif action == "clock":
        note(f"{step}: clock jump")
        note(clock.jump(rng))
    else:
        faults.full_for = rng.randint(1, 6)
        note(f"{step}: disk full for {faults.full_for} writes")


def _loadgen(rng, faults, backend, clock, outcome, tmp) -> Truth:
    """The load generator's runner stepped through simulated time (its wall clock the
    schedule's, across midnight) into a HitRecorder behind the fault layer."""
    truth = Truth(stats=Ledger())
    counted = CountedHits(lambda: HitRecorder(backend.faulty, flush_interval=3600,
                                              clock=clock), truth.stats)
    runner = LoadRunner(Tap(counted), TrafficModel(sites=2, pages=4, seed=rng.randrange(99)),
                        rate=rng.choice((5, 50)), clock=lambda: 0.0, wall=clock)
    note, now = faults.note, 0.0
    faults.armed = True
    for step in range(rng.randint(6, 20)):
        action = rng.choices(("tick", "flush", "kill", "restart", "clock", "full"),
                             (8, 5, 1, 1, 1, 1))[0]
        if action == "tick":
            now += rng.choice((0.1, 0.5, 1.0))
            clock.tick(rng)
            note(f"{step}: tick -> {runner.step(now)} hits")
        elif action == "flush":
            note(f"{step}: flush -> {'acknowledged' if counted.flush() else 'failed'}")
        elif action == "kill":
            note(f"{step}: kill the recorder holding {len(counted.taken)}, start a new one")
            counted.kill_and_restart()
        else:
            _store_fault(action, step, rng, faults, backend, clock)
    faults.armed, faults.full_for = False, 0
    note("heal: faults off, the recorder closed")
    counted.heal()
    return truth


SCENARIOS = {"recorders": _recorders, "ingest": simingest.scenario,
             "beacon": simbeacon.scenario, "loadgen": _loadgen}
# How often each is picked: a beacon schedule starts an app (seconds).
WEIGHTS = {"recorders": 4, "ingest": 4, "beacon": 1, "loadgen": 1}
EMBEDDED_ONLY = {"beacon"}      # the app opens the store by its path


def run(seed: int, tmp, wire_uri: str | None = None, scenario: str | None = None) -> Outcome:
    """The schedule of ``seed`` on a store in ``tmp`` (or the wire server's, sometimes,
    when ``wire_uri`` is given); ``scenario`` pins the writers (a seed test's, so that
    scenarios added later do not change what it replays)."""
    pick = random.Random(seed)          # which scenario and backend
    outcome = Outcome(seed)
    outcome.scenario = scenario or pick.choices(sorted(SCENARIOS),
                                                [WEIGHTS[n] for n in sorted(SCENARIOS)])[0]
    wire = (wire_uri is not None and pick.random() < 0.2
            and outcome.scenario not in EMBEDDED_ONLY)
    outcome.backend = "wire" if wire else "embedded"
    # The schedule's own draws, apart from the pick: a seed pinned to its scenario (a
    # seed test) replays the same schedule whatever scenarios are added later.
    rng = random.Random(f"schedule {seed}")
    faults = Faults(random.Random(f"faults {seed}"), rate=rng.choice((0.05, 0.15, 0.3)))
    outcome.steps = faults.steps
    backend = (Backend("wire", wire_uri, f"sim_{seed}", faults) if wire
               else Backend("embedded", str(tmp / "store"), None, faults))
    try:
        truth = SCENARIOS[outcome.scenario](rng, faults, backend, SimClock(), outcome, tmp)
        outcome.problems += check(backend.db, truth)
    except Exception:
        outcome.problems += ["the schedule raised:", traceback.format_exc()]
    finally:
        outcome.faults = faults.injected
        backend.close()
    return outcome
