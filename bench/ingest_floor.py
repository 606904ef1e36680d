"""The least a time-ordered log costs hitboard's storage contract, against GoAccess's
whole run on the same file: the floor.

    .venv/bin/python bench/ingest_floor.py [--inputs longtail:200000 shifted:500000]

For each input (made by ``bench/logs.py``, as ``bench/ingest_vs_goaccess.py`` makes it):

1. GoAccess reads it (``goaccess FILE --log-format=COMBINED -o report.json``), then
   ``hitboard ingest FILE --site real`` with default settings, each timed whole.
2. **The documents the contract asks for.** Every ``stats.daily`` and ``stats.monthly``
   row that ingest wrote (a document per page and day, and per page and month, each with
   its hourly and minute counters) is written again into a fresh SQLite file with the
   same table and indexes, the same pragmas and the store's own zstd dictionaries, in one
   transaction, the documents already built: only C work is left (BSON encoding, zstd
   compression, SQLite's inserts), the Python around each call being one loop step.
   No writer of this contract into this store can do less per document.
3. **The lines.** In one process: the parser's first regular expression alone over
   every line (``_STRICT.match``, C), and hitboard's whole ``LineParser.parse``.

Printed: each figure in seconds and as a share of GoAccess's whole run (≥ 100%: that
part alone takes longer than GoAccess takes for everything), and two floors on 2 cores,
both generous: the documents' C work, serial as one writer's transaction is, plus the
regex alone spread over both cores; and the same with the whole parser instead of the
regex.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import bson
import zstandard

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ingest_vs_goaccess as versus  # noqa: E402
import logs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from queries.ingest import logformat  # noqa: E402

COUNTERS = ["hitboard.stats.daily", "hitboard.stats.monthly"]
MAGIC = b"\x28\xb5\x2f\xfd"     # a zstd frame's first bytes
DEFAULT_INPUTS = ("longtail:200000", "shifted:500000")


def documents_floor(store: Path, target: Path, tables: list[str], blank: bool = False
                    ) -> dict[str, float | int]:
    """Seconds to encode, compress and insert every row of ``tables`` again, and the
    bytes they take; ``blank``: each document stored as no bytes at all (the bytes of the
    rows' keys and indexes alone)."""
    source = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    dictionaries = {i: zstandard.ZstdCompressionDict(bytes(data))
                    for i, data in source.execute("SELECT id, data FROM hb_dicts")}
    target.unlink(missing_ok=True)
    out = sqlite3.connect(target, isolation_level=None)
    out.execute("PRAGMA journal_mode=WAL")
    out.execute("PRAGMA synchronous=NORMAL")
    out.execute("PRAGMA cache_size=-65536")
    figures = {"documents": 0, "encode": 0.0, "compress": 0.0, "insert": 0.0}
    for table in tables:
        schema = [sql for (sql,) in source.execute(
            "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
            "ORDER BY type DESC", (table,))]
        rows = source.execute(f'SELECT * FROM "{table}"').fetchall()
        if not rows:
            continue
        docs = [_decoded(row[2], dictionaries) for row in rows]
        dict_id = zstandard.get_frame_parameters(rows[-1][2]).dict_id \
            if rows[-1][2][:4] == MAGIC else None
        compressor = (zstandard.ZstdCompressor(level=3, dict_data=dictionaries[dict_id],
                                               write_checksum=False)
                      if dict_id else zstandard.ZstdCompressor(level=3))
        encode, compress = bson.encode, compressor.compress
        started = time.perf_counter()
        encoded = [encode(doc) for doc in docs]
        figures["encode"] += time.perf_counter() - started
        started = time.perf_counter()
        packed = [b"" if blank else compress(blob) for blob in encoded]
        figures["compress"] += time.perf_counter() - started
        fresh = [(row[1], blob, *row[3:]) for row, blob in zip(rows, packed, strict=True)]
        columns = len(rows[0]) - 1
        for sql in schema:
            out.execute(sql)
        insert = (f'INSERT INTO "{table}" VALUES (NULL, '
                  f'{", ".join("?" * columns)})')
        started = time.perf_counter()
        out.execute("BEGIN")
        out.executemany(insert, fresh)
        out.execute("COMMIT")
        figures["insert"] += time.perf_counter() - started
        figures["documents"] += len(rows)
    out.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out.close()
    source.close()
    figures["bytes"] = target.stat().st_size
    return figures


def _decoded(blob: bytes, dictionaries: dict) -> dict:
    if blob[:4] == MAGIC:
        dict_id = zstandard.get_frame_parameters(blob).dict_id
        blob = zstandard.ZstdDecompressor(dict_data=dictionaries[dict_id]).decompress(blob)
    return bson.decode(blob)


def lines_floor(log: Path) -> dict[str, float]:
    """Seconds for the first regular expression alone, and for the whole parser."""
    with open(log, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    match = logformat._STRICT.match
    started = time.perf_counter()
    for line in lines:
        match(line)
    regex = time.perf_counter() - started
    parse = logformat.LineParser().parse
    started = time.perf_counter()
    for line in lines:
        parse(line)
    return {"regex": regex, "parse": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", nargs="+", type=versus.parse_input,
                        default=[versus.parse_input(t) for t in DEFAULT_INPUTS],
                        metavar="KIND:LINES")
    args = parser.parse_args()
    tool, reason = versus.goaccess()
    if tool is None:
        raise SystemExit(f"GoAccess is needed: {reason}")
    hitboard = str(Path(sys.executable).with_name("hitboard"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="hb-floor-") as tmp:
        work = Path(tmp)
        for kind, count in args.inputs:
            log = work / f"{kind}.log"
            logs.make(kind, count, log)
            clients = work / f"{kind}.ip.log"
            if versus.with_ip_clients(log, clients):
                log = clients
            env = versus.clean_env()
            goaccess = versus.timed([tool, str(log), "--log-format=COMBINED", "-o",
                                     str(work / "report.json")], work, env)
            store = work / f"{kind}.store"
            ours = versus.timed([hitboard, "ingest", str(log), "--site", "real",
                                 "--store", str(store)], work, env)
            database = store / "hitboard.sqlite3"
            counters = documents_floor(database, work / "floor.sqlite3", COUNTERS)
            keys = documents_floor(database, work / "floor.sqlite3", COUNTERS, blank=True)
            every = documents_floor(database, work / "floor.sqlite3", tables(database))
            rows.append((kind, count, goaccess.wall, ours.wall, counters, every,
                         lines_floor(log), keys["bytes"] / log.stat().st_size))
    print(f"the floor: the store's rows written again with C work only, and the "
          f"lines parsed, against GoAccess's whole run; {os.cpu_count()} cores, load "
          f"{versus.load1()} at the end\n")
    print("| input: the command that makes it | GoAccess s | hitboard s (ratio) | rows "
          "(counters; all) | encode + zstd + insert s: counters (× GoAccess) | every row "
          "(× GoAccess) | regex alone s | whole parser s | floor on 2 cores: every row + "
          "regex / 2 (best ratio) | every row + parser / 2 (best ratio) | counters' keys "
          "and indexes alone, × the log |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, count, theirs, ours, counters, every, parsed, keys in rows:
        c_counters, c_every = _c_work(counters), _c_work(every)
        floor_regex = c_every + parsed["regex"] / 2
        floor_parse = c_every + parsed["parse"] / 2
        print(f"| `{logs.command(kind, count)}` | {theirs:.2f} | {ours:.2f} "
              f"({theirs / ours:.2f}×) | {counters['documents']:,}; {every['documents']:,} "
              f"| {c_counters:.2f} ({c_counters / theirs:.0%}) | {c_every:.2f} "
              f"({c_every / theirs:.0%}) | {parsed['regex']:.2f} | {parsed['parse']:.2f} | "
              f"{floor_regex:.2f} ({theirs / floor_regex:.2f}×) | {floor_parse:.2f} "
              f"({theirs / floor_parse:.2f}×) | {keys:.2f} |")


def tables(database: Path) -> list[str]:
    """Every collection's table in the store."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as con:
        return [name for (name,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'hitboard.%'")]


def _c_work(figures: dict) -> float:
    return figures["encode"] + figures["compress"] + figures["insert"]

if __name__ == "__main__":
    main()
