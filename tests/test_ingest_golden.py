"""The same answers: ``hitboard ingest`` stores exactly what it stored when the fixture in
tests/golden/ was recorded (scripts/record_golden.py), for the shared log and a seeded
20,000-line long tail (``bench/logs.py longtail``), whether the lines are mapped in the
ingest's process (``--jobs 1``) or by worker processes (``--jobs 2``, small chunks).

Every collection is compared whole, document by document, after these normalizations,
each of something no read shows a user:
- ``checkpoints`` left out: file offsets, writer ids, watermarks (exactly-once bookkeeping).
- write stamps dropped (``ingested``, ``computed``, ``registered``): when it ran, not what.
- ObjectIds dropped, and annotations' ``time``, ``created``: drawn at insert, wall clock.
- writer guards dropped (counters' ``flushes``, dims' ``owners``, sketches' ``n``, visits'
  ``ver``): which process wrote and how often; the counts are compared.
- raw events (events.buckets|apart) as sorted rows per site and UTC hour: reads see rows;
  bucket ids and boundaries come from the writer's batches.
- visitor sketches (visitors.*, visits' ``ev`` cells) as the estimates reads make
  (``sketches.count``) of each bucket's owners united, and of every hour, day, month of a
  site and every day of a value united: the bytes depend on arrival order, the registers not.
- rollups' ``pages`` decoded to rows, ``digest`` dropped: deflate's bytes, the same rows.
- keys sorted (reads look fields up by name); an empty collection reads as an absent one.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import NamedTuple

import pytest
import zstandard
from bson import Decimal128, ObjectId
from click.testing import CliRunner

import queries
from dashboard.cli import main
from queries.dimensions import sketches
from queries.events import buckets
from queries.rollups.documents import rows as rollup_rows

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
SHARED = ROOT.parent / "shared" / "data" / "apache_combined_2015.log"
LONGTAIL_LINES = 20_000


class Case(NamedTuple):
    site: str       # given to --site
    log: str        # the log's file name (an annotation names it)
    full: bool      # the fixture holds its documents (else their digests: 1 MB at most)
    sha256: str     # the log's bytes when the fixture was recorded


CASES = {
    "shared": Case("logs", SHARED.name, True,
                   "f15c31e905f86c7b4b6ab44aee74d0a2086dce89f010187d983edea7ef0364ef"),
    "longtail": Case("www.shop-example.com", "longtail.log", False,
                     "d6f9d5d3b44d5607b8f8294ddfe48bdd8b489610b0a82580e3dc057c2c805f9d"),
}
RECORDED_DOCUMENTS = ("scripts/record_golden.py --documents DIR, run on the commit that "
                      "recorded tests/golden/, writes the documents")
SKIPPED = {"checkpoints"}
STAMPS = {"ingested", "computed", "registered"}
GUARDS = {"flushes", "owners"}
EVENT_COLLECTIONS = {"events.buckets", "events.apart"}

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not SHARED.exists(), reason=f"{SHARED} is not there")]


# -- running today's path -----------------------------------------------------------------

def make_longtail(target: Path) -> Path:
    """The long-tail sample, by the command README names (seeded: the same bytes)."""
    subprocess.run([sys.executable, str(ROOT / "bench" / "logs.py"), "longtail",
                    "--lines", str(LONGTAIL_LINES), str(target)], check=True,
                   capture_output=True)
    return target


def ingest(log: Path, site: str, store: Path, jobs: int) -> None:
    """``hitboard ingest LOG --site SITE --jobs JOBS`` into a fresh store."""
    result = CliRunner().invoke(main, ["ingest", str(log), "--site", site, "--store",
                                       str(store), "--jobs", str(jobs)])
    assert result.exit_code == 0, result.output


# -- canonical documents ------------------------------------------------------------------

def _json(value):
    """What JSON cannot hold as it is: dates as ISO text, the rest tagged."""
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, Decimal128 | Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, bytes):
        return {"$hex": value.hex()}
    if isinstance(value, ObjectId):
        return {"$oid": str(value)}
    raise TypeError(f"{type(value).__name__} in a stored document")


def text(doc) -> str:
    """A document's canonical JSON: keys sorted, dates as ISO text."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=_json)


def _estimate(blobs, lg_k: int) -> list[int]:
    return list(sketches.count([sketches.load(b) for b in blobs], lg_k))


def _without(doc: dict, names) -> dict:
    return {k: v for k, v in doc.items() if k not in names}


def _event_rows(docs) -> dict:
    hours: dict[str, list] = defaultdict(list)
    for bucket in docs:
        for event in buckets.events(bucket, range(bucket["n"])):
            hour = f"{event['site']}|{event['time']:%Y%m%d%H}"
            hours[hour].append([event['time'].isoformat(),
                                 *(event.get(field) for field in buckets.ROW[1:])])
    return {hour: {"_id": hour, "rows": sorted(rows, key=text)}
            for hour, rows in hours.items()}


def _expired(docs) -> dict:
    hours: dict[str, dict] = {}
    for doc in docs:
        key = f"{doc['site']}|{doc['hour']}"
        kept = hours.setdefault(key, {"_id": key, "rows": []})
        kept["rows"] += [list(r) for r in zip(doc["path"], doc["status"], doc["hits"],
                                               doc["bytes"], strict=True)]
    for kept in hours.values():
        kept["rows"].sort(key=json.dumps)
    return hours


def _whole_site_sketches(docs) -> dict:
    """visitors.hourly|daily|monthly: per bucket, everyone's and the humans' estimates."""
    groups: dict[str, list] = defaultdict(list)
    for doc in docs:
        groups[doc["_id"].rsplit("/", 1)[0]].append(doc)
    out = {}
    for key, found in groups.items():
        out[key] = {"_id": key, "metadata": found[0]["metadata"],
                    "s": _estimate([d["s"] for d in found], sketches.LG_K),
                    "h": _estimate([d.get("h", d["s"]) for d in found], sketches.LG_K)}
    return out


def _value_sketches(docs) -> dict:
    """visitors.values: per bucket and dimension, each value's humans, bots, everyone."""
    groups: dict[str, dict] = {}
    for doc in docs:
        key = doc["_id"].rsplit("/", 1)[0]
        group = groups.setdefault(key, {"doc": doc, "values": defaultdict(list)})
        for item in doc["values"]:
            group["values"][(item["v"], bool(item.get("b")))].append(item["s"])
    out = {}
    for key, group in groups.items():
        values: dict[str, dict] = defaultdict(dict)
        for (value, bot), blobs in group["values"].items():
            values[value]["bots" if bot else "humans"] = _estimate(blobs, sketches.LG_K_VALUE)
        for value, found in values.items():
            both = group["values"].get((value, False), []) + group["values"].get((value, True), [])
            found["all"] = (_estimate(both, sketches.LG_K_VALUE) if len(found) > 1
                            else next(iter(found.values())))
        doc = group["doc"]
        out[key] = {"_id": key, "metadata": doc["metadata"], "level": doc["level"],
                    "d": doc["d"], "values": dict(values)}
    return out


def _unions(db) -> dict:
    """The unions a range reads: a site's every hour, day and month (everyone, humans),
    each dimension value's every day."""
    out: dict[str, dict] = {}
    whole: dict[tuple, list] = defaultdict(list)
    for level, coll in sketches.TOTALS.items():
        for doc in db[coll].find():
            whole[(doc["metadata"]["site"], level, "s")].append(doc["s"])
            whole[(doc["metadata"]["site"], level, "h")].append(doc.get("h", doc["s"]))
    for (site, level, which), blobs in whole.items():
        key = f"{site}|{level}|{which}"
        out[key] = {"_id": key, "n": _estimate(blobs, sketches.LG_K)}
    values: dict[tuple, list] = defaultdict(list)
    for doc in db[sketches.VALUES].find({"level": "day"}):
        for item in doc["values"]:
            values[(doc["metadata"]["site"], doc["d"], item["v"])].append(item["s"])
    for (site, dim, value), blobs in values.items():
        key = f"{site}|day|{dim}|{value}"
        out[key] = {"_id": key, "n": _estimate(blobs, sketches.LG_K_VALUE)}
    return out


def _visits(doc: dict) -> dict:
    """A visits document, each custom-event cell's sketch (its last item) as estimates."""
    doc = _without(doc, {"ver"})

    def cells(rows):
        return [[*row[:-1], _estimate([row[-1]], sketches.LG_K_VALUE)
                 if isinstance(row[-1], bytes) else row[-1]] for row in rows]

    if "ev" in doc:
        doc["ev"] = {hour: cells(rows) for hour, rows in doc["ev"].items()}
    for holder in (doc.get("sums"), doc.get("b")):
        if isinstance(holder, dict) and "ev" in holder:
            ev = holder["ev"]
            holder["ev"] = (cells(ev) if isinstance(ev, list)
                            else {h: cells(rows) for h, rows in ev.items()})
    return doc


def _rollup(doc: dict) -> dict:
    return {**_without(doc, STAMPS | {"digest", "pages"}), "pages": rollup_rows(doc)}


def _keyed(docs, key=lambda d: d["_id"]) -> dict:
    return {str(key(doc)): doc for doc in docs}


def _by_content(docs, drawn=("_id",)) -> dict:
    """Documents whose ``_id`` is drawn at insert, keyed by their content."""
    return _keyed((_without(d, {*drawn, *STAMPS}) for d in docs), key=text)


def canonical(db) -> dict[str, dict[str, str]]:
    """Every collection of ``db`` but ``SKIPPED``, as {_id: canonical document ``text``}."""
    found: dict[str, dict] = {}
    for coll in sorted(db.list_collection_names()):
        if coll in SKIPPED:
            continue
        docs = list(db[coll].find())
        if coll in EVENT_COLLECTIONS:
            docs = _event_rows(docs)
        elif coll == "events.expired":
            docs = _expired(docs)
        elif coll in (sketches.HOURLY, sketches.DAILY, sketches.MONTHLY):
            docs = _whole_site_sketches(docs)
        elif coll == sketches.VALUES:
            docs = _value_sketches(docs)
        elif coll.startswith("visits."):
            docs = _keyed(_visits(d) for d in docs)
        elif coll.startswith("rollups."):
            docs = _keyed(_rollup(d) for d in docs)
        elif coll == "annotations":
            docs = _by_content(docs, drawn=("_id", "time", "created"))
        elif any(isinstance(d["_id"], ObjectId) for d in docs):
            docs = _by_content(docs)
        else:
            docs = _keyed(_without(d, STAMPS | GUARDS) for d in docs)
        found[coll] = {k: text(v) for k, v in docs.items()}
    found["visitors.unions"] = {k: text(v) for k, v in _unions(db).items()}
    return {coll: docs for coll, docs in found.items() if docs}


# -- the fixture --------------------------------------------------------------------------

def fixture_path(case: str) -> Path:
    return GOLDEN / f"{case}.tsv.zst"


def digest(doc_text: str) -> str:
    """48 bits of a canonical document: a change slips past one in 2**48."""
    return hashlib.blake2b(doc_text.encode(), digest_size=6).hexdigest()


def write_fixture(path: Path, stored: dict[str, dict[str, str]], full: bool) -> None:
    """One line per document, ``collection TAB _id TAB document`` (both names as JSON
    strings, the document as ``text`` makes it, or its ``digest`` as a JSON string),
    sorted, zstd'd: the same answers record the same bytes."""
    lines = [f"{json.dumps(coll)}\t{json.dumps(key, ensure_ascii=False)}\t"
             f"{doc if full else json.dumps(digest(doc))}\n"
             for coll in sorted(stored) for key, doc in sorted(stored[coll].items())]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zstandard.ZstdCompressor(level=19).compress("".join(lines).encode()))


def read_fixture(path: Path) -> dict[str, dict[str, str]]:
    """{collection: {_id: document text, or a JSON string of its digest}}."""
    stored: dict[str, dict[str, str]] = defaultdict(dict)
    data = zstandard.ZstdDecompressor().decompress(path.read_bytes())
    for line in data.decode().splitlines():
        coll, key, doc = line.split("\t", 2)
        stored[json.loads(coll)][json.loads(key)] = doc
    return dict(stored)


def stored_answers(log: Path, site: str, store: Path, jobs: int) -> dict[str, dict[str, str]]:
    """Ingest ``log`` into a fresh ``store``; what it then holds, canonical."""
    ingest(log, site, store, jobs)
    db = queries.connect(str(store))
    try:
        return canonical(db)
    finally:
        db.client.close()


# -- comparing ----------------------------------------------------------------------------

def _first_path(expected, actual, path: str = "") -> str:
    """Where two JSON values first differ, as ``.a.b[3]``: actual, then expected."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{path}.{key}: missing, expected {_short(expected[key])}"
            if key not in expected:
                return f"{path}.{key}: {_short(actual[key])}, expected nothing"
            if expected[key] != actual[key]:
                return _first_path(expected[key], actual[key], f"{path}.{key}")
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (e, a) in enumerate(zip(expected, actual, strict=False)):
            if e != a:
                return _first_path(e, a, f"{path}[{i}]")
        return f"{path}: {len(actual)} items, expected {len(expected)}"
    return f"{path or '(document)'}: {_short(actual)}, expected {_short(expected)}"


def _short(value, limit: int = 300) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def difference(expected: dict[str, dict[str, str]], actual: dict[str, dict[str, str]],
               full: bool) -> str | None:
    """The first collection that differs and its first differing document (by ``_id``),
    or None. ``full``: ``expected`` holds documents, else their digests."""
    for coll in sorted(set(expected) | set(actual)):
        want, got = expected.get(coll, {}), actual.get(coll, {})
        if not full:
            got_texts, got = got, {k: json.dumps(digest(v)) for k, v in got.items()}
        if want == got:
            continue
        counts = f"({len(got):,} documents, expected {len(want):,})"
        for key in sorted(set(want) | set(got)):
            if key not in got:
                return f"{coll}: document {key!r} missing {counts}; expected {want[key]}"
            if key not in want:
                shown = got[key] if full else got_texts[key]
                return f"{coll}: unexpected document {key!r} {counts}: {_short(shown, 2000)}"
            if want[key] != got[key]:
                if not full:
                    return (f"{coll}: document {key!r} differs from the one recorded (a "
                            f"digest: {RECORDED_DOCUMENTS}): {_short(got_texts[key], 2000)}")
                return (f"{coll}: document {key!r} differs at "
                        f"{_first_path(json.loads(want[key]), json.loads(got[key]))}\n"
                        f"expected {_short(want[key], 2000)}\nactual   {_short(got[key], 2000)}")
    return None


# -- the test -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("golden")
    return {"shared": SHARED, "longtail": make_longtail(folder / CASES["longtail"].log)}


@pytest.mark.parametrize("jobs", [1, 2], ids=["one-process", "workers"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_ingest_stores_the_recorded_answers(case, jobs, logs, tmp_path, frozen_clock,
                                            monkeypatch):
    if jobs > 1:    # today's worker processes take these small logs too, a chunk each time
        from queries.ingest import chunks
        from queries.ingest import run as ingest_run
        monkeypatch.setattr(ingest_run, "PARALLEL_BYTES", 0, raising=False)
        monkeypatch.setattr(chunks, "CHUNK_BYTES", 700 * 237, raising=False)
    assert hashlib.sha256(logs[case].read_bytes()).hexdigest() == CASES[case].sha256, (
        f"{logs[case]} is not the log recorded: bench/logs.py or the shared log changed")
    actual = stored_answers(logs[case], CASES[case].site, tmp_path / "store", jobs)
    found = difference(read_fixture(fixture_path(case)), actual, CASES[case].full)
    assert found is None, f"{case}, --jobs {jobs}: {found}"



def test_one_minute_counter_off_by_one_is_named_and_shown(tmp_path):
    """The comparison itself: one minute counter of one stats.daily document one more
    than recorded is found, its document named and shown, from documents or digests."""
    recorded = read_fixture(fixture_path("shared"))
    key = sorted(recorded["stats.daily"])[0]
    doc = json.loads(recorded["stats.daily"][key])
    hour = min(doc["minute"])
    minute = min(doc["minute"][hour])
    doc["minute"][hour][minute] += 1
    changed = {**recorded, "stats.daily": {**recorded["stats.daily"], key: text(doc)}}
    assert difference(recorded, changed, full=True).startswith(
        f"stats.daily: document {key!r} differs at .minute.{hour}.{minute}: "
        f"{doc['minute'][hour][minute]}, expected {doc['minute'][hour][minute] - 1}\n")
    write_fixture(tmp_path / "digests.tsv.zst", recorded, full=False)
    digests = read_fixture(tmp_path / "digests.tsv.zst")
    assert difference(digests, recorded, full=False) is None
    found = difference(digests, changed, full=False)
    assert found.startswith(f"stats.daily: document {key!r} differs from the one recorded")
    assert text(doc)[:1000] in found
