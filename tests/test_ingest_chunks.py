"""A log file cut into chunks of lines to map, in bounded memory whatever the file holds:
a line too long to read is skipped as it is read, a 10 GB file is read a chunk at a time."""

from __future__ import annotations

import tracemalloc

from queries.ingest import chunks


def read(path, start=0, end=None, chunk=None) -> list[chunks.Chunk]:
    with path.open("rb") as handle:
        end = path.stat().st_size if end is None else end
        return list(chunks.read(handle, start, end, chunk))


def test_chunks_cut_a_range_after_newlines_every_chunk_of_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "chunk_bytes", lambda size: 16)     # sized: the next test
    lines = [f"line {i}\n".encode() for i in range(12)] + [b"a line longer than a chunk\n",
                                                          b"last, no newline"]
    log = tmp_path / "a.log"
    log.write_bytes(b"".join(lines))
    cut = read(log)
    # each chunk ends after its last whole line; the long line waits for its newline
    assert [c.data for c in cut][:2] == [b"".join(lines[:2]), b"".join(lines[2:4])]
    assert lines[12] in cut[-2].data
    assert [c.data.endswith(b"\n") for c in cut] == [True] * (len(cut) - 1) + [False]
    assert b"".join(c.data for c in cut) == log.read_bytes()
    for c in cut:
        assert c.end == c.start + len(c.data)
    start = len(b"".join(lines[:4]))     # a range ending within a line: as far as it goes
    end = start + len(lines[4]) + 2
    assert read(log, start, end) == [(start, start + len(lines[4]), lines[4]),
                                     (start + len(lines[4]), end, lines[5][:2])]


def test_chunks_come_in_pairs_of_one_size(monkeypatch):
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 100)
    assert chunks.chunk_bytes(1_000) == 100
    assert chunks.chunk_bytes(950) == 95             # 10 chunks of the same size
    assert chunks.chunk_bytes(1_001) == 84           # 12 chunks, not 10 and a lone one
    assert chunks.chunk_bytes(150) == 75             # 2 chunks
    assert chunks.chunk_bytes(1) == chunks.chunk_bytes(0) == 1
    for size in range(2, 3_000, 7):
        chunk = chunks.chunk_bytes(size)
        assert chunk <= 100 and -(-size // chunk) % 2 == 0, size


def test_a_line_too_long_is_a_chunk_without_data_wherever_it_falls(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "MAX_LINE_BYTES", 100)
    long = b"x" * 250 + b"\n"
    log = tmp_path / "a.log"
    log.write_bytes(b"a\n" + long + b"b\n" + long + long + b"c\n" + b"y" * 300)
    for chunk in (16, 64, 1_000, 10_000):        # in one read, across reads, at its end
        cut = read(log, chunk=chunk)
        assert [c.data for c in cut if c.data is None] == [None] * 4, chunk
        assert b"".join(c.data for c in cut if c.data) == b"a\nb\nc\n", chunk
        assert [(c.start, c.end) for c in cut if c.data is None] == [
            (2, 253), (255, 506), (506, 757), (759, 1_059)], chunk
        assert all(a.end == b.start for a, b in zip(cut, cut[1:], strict=False))


def test_a_100_mb_line_is_never_held_whole(tmp_path):
    log = tmp_path / "a.log"
    with log.open("wb") as out:
        out.write(b"first\n")
        for _ in range(100):
            out.write(b"z" * 2**20)
        out.write(b"\nlast\n")
    tracemalloc.start()
    try:
        cut = read(log)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [c.data for c in cut] == [b"first\n", None, b"last\n"]
    assert peak < 3 * chunks.CHUNK_BYTES + 2 * chunks.MAX_LINE_BYTES


def test_a_10_gb_log_is_read_in_bounded_memory(tmp_path):
    """A sparse file: lines, a 10 GB hole (one line of NULs, refused as too long), lines;
    nothing of it is held longer than a chunk."""
    log = tmp_path / "big.log"
    head, tail = b"head 1\nhead 2\n", b"\ntail 1\ntail 2\n"
    with log.open("wb") as out:
        out.write(head)
        out.seek(10 * 2**30)
        out.write(tail)
    tracemalloc.start()
    try:
        with log.open("rb") as handle:
            seen = [(c.start, c.end, c.data) for c in
                    chunks.read(handle, 0, log.stat().st_size)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    end = 10 * 2**30 + 1
    assert seen == [(0, len(head), head), (len(head), end, None),
                    (end, end + len(tail) - 1, tail[1:])]
    assert peak < 3 * chunks.CHUNK_BYTES + 2 * chunks.MAX_LINE_BYTES
