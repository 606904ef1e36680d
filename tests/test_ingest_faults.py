"""`hitboard ingest` stopped by SIGTERM or killed mid-file (SIGKILL, against the
wire-protocol server), in batch and --follow mode: every log line is counted exactly
once across the restart, in the statistics and in the events (a hard exit at each step
of a flush: test_ingest_crash.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fakes import stored_count
from faultkit import WAIT, connect, counted, expected, start_server, wait_for
from ingestkit import (
    HITBOARD,
    LINE,
    append,
    checkpoint,
    ingest_cli,
    read_position,
    saved_offset,
    sent,
    stored_counts,
)

import queries


@pytest.fixture
def server(tmp_path):
    server = start_server(tmp_path)
    yield server
    server.stop()


class Follow:
    """A `hitboard ingest --follow` process on one log file."""

    def __init__(self, server, log: Path, *extra: str):
        self.log = log
        self.command = [str(HITBOARD), "ingest", "--follow", "--site", "logs",
                        "--store", f"{server.uri}faults", *extra, str(log)]
        self.process: subprocess.Popen | None = None

    def start(self) -> Follow:
        self.process = subprocess.Popen(self.command, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        return self

    def read_position(self) -> int:
        return read_position(self.process.pid, self.log)

    def end(self, signum: int) -> str:
        """Send ``signum``, wait for the exit; returns what the process wrote on stderr."""
        self.process.send_signal(signum)
        try:
            code = self.process.wait(timeout=WAIT)
        finally:
            self.process.kill()
            self.process.wait()
            errors = self.process.stderr.read().decode(errors="replace")
            self.process.stderr.close()
        assert signum == signal.SIGKILL or code == 0, errors
        return errors


@pytest.mark.skipif(not Path("/proc/self/fdinfo").exists(), reason="needs Linux /proc")
def test_sigterm_to_ingest_follow_flushes_what_it_read(server, tmp_path):
    log = tmp_path / "access.log"
    append(log, 0, 50)
    db = connect(server.port)
    follow = Follow(server, log).start()
    wait_for(lambda: saved_offset(db) == 50 * LINE, "the first lines saved")

    append(log, 50, 150)
    wait_for(lambda: follow.read_position() == 150 * LINE, "the appended lines read")
    follow.end(signal.SIGTERM)

    daily, monthly = counted(db, "logs")
    assert daily == monthly == expected(sent(150))
    assert stored_count(db, "logs") == 150
    assert saved_offset(db) == 150 * LINE
    db.client.close()


def killed_in_flush_then_restarted(server, tmp_path, *mode: str) -> None:
    """Kill ingest while it writes the hits of lines past the saved position (the
    worst moment), restart it: each line is counted once."""
    lines = 20_000 if mode else 50_000
    log = tmp_path / "access.log"
    append(log, 0, lines)
    db = connect(server.port)

    def hits() -> int:
        return counted(db, "logs")[0]["*"]

    run = Follow(server, log, "--no-events")
    run.command.remove("--follow")
    run.command[2:2] = mode
    if not mode:     # a flush every 5,000 lines: ten moments to be killed in, not one
        run.command[:1] = [sys.executable, "-c", SMALL_BATCHES, "5000"]
    run.start()
    wait_for(lambda: hits() > saved_offset(db) // LINE, "hits written past the saved offset")
    run.end(signal.SIGKILL)
    interrupted = checkpoint(db)["state"] == "flushing"

    run.start()
    # Up to 50,000 lines through the wire emulator: over 30 s on a loaded machine.
    wait_for(lambda: saved_offset(db) == lines * LINE, "the restarted ingest to catch up",
             timeout=4 * WAIT)
    errors = run.end(signal.SIGTERM) if mode else ""
    daily, monthly = counted(db, "logs")
    assert daily == monthly == expected(sent(lines))
    if mode:     # the summary of a follower is printed after SIGTERM
        assert ("completed the flush a stopped run left unfinished" in errors) == interrupted
    db.client.close()


SMALL_BATCHES = textwrap.dedent("""
    import sys
    from dashboard.cli import main
    from queries.ingest import run as ingest
    ingest.BATCH_LINES = int(sys.argv[1])
    main(sys.argv[2:])
""")


def test_ingest_follow_killed_mid_file_then_restarted_counts_each_line_once(server, tmp_path):
    killed_in_flush_then_restarted(server, tmp_path, "--follow")


def test_batch_ingest_killed_mid_file_then_run_again_counts_each_line_once(server, tmp_path):
    killed_in_flush_then_restarted(server, tmp_path)


SMALL_CHUNKS = textwrap.dedent("""
    import sys
    from dashboard.cli import main
    from queries.ingest import chunks
    from queries.ingest import run as ingest
    chunks.CHUNK_BYTES = int(sys.argv[1])
    main(sys.argv[2:])
""")

@pytest.mark.skipif(not Path("/proc/self/fdinfo").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("mode", ["--follow", "--no-events"])
def test_sigterm_while_busy_flushes_what_was_read_and_exits_cleanly(tmp_path, mode):
    """SIGTERM lands while lines are being fed: what was read is flushed, the exit is
    clean, and a later run takes the rest (a batch ingest stops after the chunk it is
    mapping: the file holds more than one)."""
    lines = 120_000
    log, store = tmp_path / "access.log", str(tmp_path / "store")
    append(log, 0, lines)
    process = subprocess.Popen(       # chunks of 10,000 lines: the file holds 12
        [sys.executable, "-c", SMALL_CHUNKS, str(10_000 * LINE), "ingest", "--site", "logs",
         "--store", store, mode, str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: read_position(process.pid, log) > 2_000 * LINE, "ingest to be busy")
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=WAIT)
    assert process.returncode == (0 if mode == "--follow" else 128 + signal.SIGTERM), err
    assert "Error" not in err
    daily, monthly, _ = stored_counts(store)
    db = queries.connect(store, read_only=True)
    done = saved_offset(db) // LINE
    db.client.close()
    assert 0 < done < lines and daily == monthly == expected(sent(done))
    rest = ingest_cli("--site", "logs", "--store", store, str(log))
    assert rest.exit_code == 0, rest.output
    assert stored_counts(store)[:2] == (expected(sent(lines)),) * 2
