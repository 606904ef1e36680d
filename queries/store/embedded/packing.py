"""Documents stored compressed: zstd with a dictionary trained on each collection's own
first documents.

A counter document holds a few hits under the same field names as every other one
(``metadata``, ``hourly``, ``minute.H.M``) and its page twice (``_id``, ``metadata.page``):
compressed alone, a 350-byte one shrinks by 40%; with a dictionary of its collection by
75–80%, in ~4 µs (zlib with a preset dictionary: 0.25 of the size in ~20 µs).

A stored ``doc`` is either BSON, whose first four bytes are its length, or a zstd frame,
whose magic number no BSON length can be; the frame names its dictionary. Dictionaries
live in ``hb_dicts`` and never change. One is trained inside the write transaction of a
process that has encoded ``SAMPLES`` documents of a collection with none (a log's
first flush: from its own documents, which it then packs); until that transaction
commits only its own thread packs with it, so any reader that sees a packed row can load
its dictionary. Documents written before stay BSON until rewritten, but for large ones:
a document of ``PLAIN_BYTES`` or more is compressed without a dictionary until its
collection has one (a month's visits, 1.7 MB of BSON, shrinks to a fifth; a collection
of a few such documents never gathers the samples a dictionary needs). Its frame names
dictionary 0.
"""

from __future__ import annotations

import threading

import zstandard

MAGIC = b"\x28\xb5\x2f\xfd"
SAMPLES = 256           # documents a dictionary is trained on (as written),
SAMPLE_BYTES = 1 << 20  # or fewer if they make this many bytes (a day's dimensions)
DICT_BYTES = 8_192
LEVEL = 3
SEGMENT, DMER = 1_024, 8  # fastcover's k and d, given: its search of them took 3-5x longer
#                           (15-90 ms against 5-26 ms) for the same sizes
RETRY_AFTER = 4_096     # samples gathered again before another try, after a failed one
PLAIN_BYTES = 1_024     # documents this large are compressed even without a dictionary


class Packer:
    """A store's dictionaries, as this process knows them; shared by its threads (zstd's
    contexts are not: each thread keeps its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._dicts: dict[int, zstandard.ZstdCompressionDict] = {}
        self._current: dict[str, int] = {}          # table -> dictionary id in use
        self._samples: dict[str, list[bytes]] = {}
        self._sampled: dict[str, int] = {}           # table -> bytes in its samples
        self._wanted: dict[str, int] = {}            # table -> samples before training
        self._staged: dict[str, int] = {}            # trained in the open transaction
        self._owner: int | None = None               # the thread of that transaction
        self._local = threading.local()

    # -- writing -------------------------------------------------------------------------
    def pack(self, table: str, encoded: bytes) -> bytes:
        """``encoded`` (a document's BSON) as it is stored."""
        dict_id = self._current.get(table)
        if dict_id is None:
            if self._owner == threading.get_ident():
                dict_id = self._staged.get(table)
            if dict_id is None:
                self._sample(table, encoded)
                if len(encoded) < PLAIN_BYTES:
                    return encoded
                dict_id = 0
        packed = self._compressor(dict_id).compress(encoded)
        return packed if len(packed) < len(encoded) else encoded

    def _sample(self, table: str, encoded: bytes) -> None:
        samples = self._samples.setdefault(table, [])
        if not self._enough(table, samples):
            with self._lock:
                samples.append(encoded)
                self._sampled[table] = self._sampled.get(table, 0) + len(encoded)

    def _enough(self, table: str, samples) -> bool:
        wanted = self._wanted.get(table, SAMPLES)
        return len(samples) >= wanted or (
            wanted == SAMPLES and self._sampled.get(table, 0) >= SAMPLE_BYTES)

    def train(self, con, table: str) -> bool:
        """Inside a write transaction: give ``table`` a dictionary (another process's,
        else one trained on this process's samples) once enough samples are in. True
        when it got one: the caller packs the documents it encoded before."""
        if table in self._current or table in self._staged:
            return False
        samples = self._samples.get(table, ())
        if not self._enough(table, samples):
            return False
        row = con.execute("SELECT id, data FROM hb_dicts WHERE tbl = ? ORDER BY id LIMIT 1",
                          (table,)).fetchone()
        if row is not None:
            self._adopt(table, row[0], row[1])
            return True
        dict_id = con.execute("SELECT coalesce(max(id), 0) + 1 FROM hb_dicts").fetchone()[0]
        try:
            trained = zstandard.train_dictionary(DICT_BYTES, list(samples), dict_id=dict_id,
                                                 level=LEVEL, k=SEGMENT, d=DMER)
        except zstandard.ZstdError:
            self._wanted[table] = len(samples) + RETRY_AFTER   # too alike or too few
            return False
        con.execute("INSERT INTO hb_dicts (id, tbl, data) VALUES (?, ?, ?)",
                    (dict_id, table, trained.as_bytes()))
        with self._lock:
            self._dicts[dict_id] = trained
            self._staged[table] = dict_id
            self._owner = threading.get_ident()
        return True

    def committed(self) -> None:
        if self._staged:
            with self._lock:
                for table, dict_id in self._staged.items():
                    self._current[table] = dict_id
                    self._samples.pop(table, None)
                    self._sampled.pop(table, None)
                self._staged.clear()
                self._owner = None

    def rolled_back(self) -> None:
        if self._staged:
            with self._lock:
                self._staged.clear()
                self._owner = None

    def _adopt(self, table: str, dict_id: int, data: bytes) -> None:
        with self._lock:
            self._dicts.setdefault(dict_id, zstandard.ZstdCompressionDict(data))
            self._current[table] = dict_id
            self._samples.pop(table, None)

    def packed(self, con, table: str, rows: list[tuple], at: int = 1) -> list[tuple]:
        """Rows (``doc`` at ``at``) of a batch encoded while ``table`` had no dictionary,
        packed if the batch's own documents gave it one."""
        if not self.train(con, table):
            return rows
        return [(*row[:at], self.pack(table, row[at]), *row[at + 1:])
                if row[at][:4] != MAGIC else row for row in rows]

    # -- reading -------------------------------------------------------------------------
    def unpack(self, con, stored: bytes) -> bytes:
        """The BSON of a stored ``doc``."""
        if stored[:4] != MAGIC:
            return stored
        dict_id = zstandard.get_frame_parameters(stored).dict_id
        return self._decompressor(con, dict_id).decompress(stored)

    def _compressor(self, dict_id: int) -> zstandard.ZstdCompressor:
        found = getattr(self._local, "compressors", None)
        if found is None:
            found = self._local.compressors = {}
        compressor = found.get(dict_id)
        if compressor is None:
            compressor = found[dict_id] = zstandard.ZstdCompressor(
                level=LEVEL, dict_data=self._dicts[dict_id] if dict_id else None,
                write_checksum=False)
        return compressor

    def _decompressor(self, con, dict_id: int) -> zstandard.ZstdDecompressor:
        found = getattr(self._local, "decompressors", None)
        if found is None:
            found = self._local.decompressors = {}
        decompressor = found.get(dict_id)
        if decompressor is None and not dict_id:
            decompressor = found[dict_id] = zstandard.ZstdDecompressor()
        if decompressor is None:
            data = self._dicts.get(dict_id)
            if data is None:
                row = con.execute("SELECT data FROM hb_dicts WHERE id = ?",
                                  (dict_id,)).fetchone()
                if row is None:
                    raise ValueError(f"a stored document names dictionary {dict_id}, "
                                     "which the store does not hold")
                with self._lock:
                    data = self._dicts.setdefault(dict_id,
                                                  zstandard.ZstdCompressionDict(row[0]))
            decompressor = found[dict_id] = zstandard.ZstdDecompressor(dict_data=data)
        return decompressor
