"""`hitboard ingest` stopped by SIGTERM or killed mid-file (SIGKILL at the worst step of a
flush, against the wire-protocol server), in batch and --follow mode: every log line is
counted exactly once across the restart, in the statistics and in the events (a kill at
each step of a flush: test_ingest_crash.py)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from fakes import stored_count
from faultkit import WAIT, connect, counted, expected, start_server, wait_for
from ingestkit import (
    HITBOARD,
    LINE,
    append,
    checkpoint,
    errors,
    halted_at,
    ingest_cli,
    kill_at,
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

    def end(self, signum: int | None = None) -> str:
        """Send ``signum`` (if any), wait for a clean exit; returns what the process wrote
        on stderr."""
        if signum is not None:
            self.process.send_signal(signum)
        try:
            code = self.process.wait(timeout=4 * WAIT)
        finally:
            self.process.kill()
            self.process.wait()
            errors = self.process.stderr.read().decode(errors="replace")
            self.process.stderr.close()
        assert code == 0, errors
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
    """Kill ingest when it has written the hits of lines past the saved position and not
    yet saved the new one (the worst moment), restart it: each line is counted once."""
    lines = 2_000
    log = tmp_path / "access.log"
    append(log, 0, lines)
    db = connect(server.port)
    run = Follow(server, log, "--no-events")
    if not mode:
        run.command.remove("--follow")
    kill_at("after-hits", 2, *run.command[2:])
    assert 0 < saved_offset(db) < lines * LINE and checkpoint(db)["state"] == "flushing"

    run.start()
    wait_for(lambda: saved_offset(db) == lines * LINE, "the restarted ingest to catch up")
    errors = run.end(signal.SIGTERM if mode else None)
    assert "completed the flush a stopped run left unfinished" in errors
    daily, monthly = counted(db, "logs")
    assert daily == monthly == expected(sent(lines))
    db.client.close()


def test_ingest_follow_killed_mid_file_then_restarted_counts_each_line_once(server, tmp_path):
    killed_in_flush_then_restarted(server, tmp_path, "--follow")


def test_batch_ingest_killed_mid_file_then_run_again_counts_each_line_once(server, tmp_path):
    killed_in_flush_then_restarted(server, tmp_path)


@pytest.mark.parametrize("mode", ["--follow", "--no-events"])
def test_sigterm_while_busy_flushes_what_was_read_and_exits_cleanly(tmp_path, mode):
    """SIGTERM lands while lines are being fed (it stopped itself after counting its
    third chunk of 250 lines): what was read is flushed, the exit is clean, and a later
    run takes the rest (a batch ingest stops after the chunk it is mapping)."""
    lines = 2_000
    log, store = tmp_path / "access.log", str(tmp_path / "store")
    append(log, 0, lines)
    with halted_at("counted", 3, "--site", "logs", "--store", store, mode,
                   str(log)) as process:
        process.send_signal(signal.SIGTERM)
        os.killpg(process.pid, signal.SIGCONT)
        code = process.wait(timeout=4 * WAIT)
        err = errors(process)
    assert code == (0 if mode == "--follow" else 128 + signal.SIGTERM), err
    assert "Error" not in err
    daily, monthly, _ = stored_counts(store)
    db = queries.connect(store, read_only=True)
    done = saved_offset(db) // LINE
    db.client.close()
    assert 0 < done < lines and daily == monthly == expected(sent(done))
    rest = ingest_cli("--site", "logs", "--store", store, str(log))
    assert rest.exit_code == 0, rest.output
    assert stored_counts(store)[:2] == (expected(sent(lines)),) * 2
