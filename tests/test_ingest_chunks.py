"""A log file cut into chunks of lines to map."""

from __future__ import annotations

from queries.ingest import chunks


def test_chunks_cut_a_range_after_newlines_every_chunk_of_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(chunks, "chunk_bytes", lambda size: 16)     # sized: the next test
    lines = [f"line {i}\n".encode() for i in range(12)] + [b"a line longer than a chunk\n",
                                                          b"last, no newline"]
    log = tmp_path / "a.log"
    log.write_bytes(b"".join(lines))
    with log.open("rb") as handle:
        cut = list(chunks.tasks(handle, 0, log.stat().st_size, "s", 7))
    # each chunk ends after its last whole line; the long line waits for its newline
    assert [data for _, (data, *_) in cut][:2] == [b"".join(lines[:2]),
                                                      b"".join(lines[2:4])]
    assert lines[12] in [data for _, (data, *_) in cut][-2]
    assert [data.endswith(b"\n") for _, (data, *_) in cut] == [True] * (len(cut) - 1) + [
        False]
    assert b"".join(data for _, (data, *_) in cut) == log.read_bytes()
    for end, (data, start, site, stream) in cut:
        assert (end, site, stream) == (start + len(data), "s", 7)
    with log.open("rb") as handle:       # a range ending within a line: as far as it goes
        start = len(b"".join(lines[:4]))
        end = start + len(lines[4]) + 2
        cut = list(chunks.tasks(handle, start, end, "s", 7))
    assert [(end_, data) for end_, (data, *_) in cut] == [
        (start + len(lines[4]), lines[4]), (end, lines[5][:2])]


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
