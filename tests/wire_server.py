"""Start, kill and restart the mongoeco wire-protocol server (scripts/wire-server.py).

The server needs Python >= 3.13 and mongoeco, which ``make test`` installs into
``.venv-wire`` (scripts/ensure-wire.sh); ``HITBOARD_WIRE_PYTHON`` names another
interpreter. Without one, :func:`unavailable` says why and the wire tests skip.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "wire-server.py"
START_TIMEOUT = 60.0

# Client options for tests that do not test timeouts. mongoeco serves every connection
# from one asyncio loop and runs each command on it to the end, so while one command
# works (a backfill inserting 3,000 rollup documents in one command takes ~20 s of CPU, a
# minute on a loaded machine) pymongo's monitor gets no answer to its heartbeat. After
# connectTimeoutMS (default 20 s) it calls the server lost and cancels the operations in
# flight (``_OperationCancelled: operation cancelled``), and new operations wait
# serverSelectionTimeoutMS (default 30 s) for it. Slow is not lost here: wait 10 minutes.
PATIENT = "connectTimeoutMS=600000&serverSelectionTimeoutMS=600000"


def python() -> Path:
    return Path(os.environ.get("HITBOARD_WIRE_PYTHON") or ROOT / ".venv-wire" / "bin" / "python")


def unavailable() -> str:
    """Why no wire server can run here, or "" when one can."""
    if not python().exists():
        return (f"no wire-protocol server: {python()} is missing (needs Python >= 3.13; "
                "`make test` creates it with scripts/ensure-wire.sh)")
    return ""


class WireServer:
    """One server process on loopback. With ``data`` it keeps its data in that directory,
    so :meth:`start` after :meth:`kill` serves the same data on the same port."""

    def __init__(self, data: Path | None, log: Path):
        self.data, self.log = data, log
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/"

    def start(self) -> WireServer:
        command = [str(python()), str(SCRIPT), "--port", str(self.port),
                   "--parent", str(os.getpid())]
        if self.data is not None:
            command += ["--data", str(self.data)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log)
        self.port = self._wait_ready()
        return self

    def _wait_ready(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        stdout = self.process.stdout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([stdout], [], [], 0.2)
            if ready:
                line = stdout.readline().decode()
                if line.startswith("ready "):
                    return int(line.rstrip().rstrip("/").rsplit(":", 1)[1])
            if self.process.poll() is not None:
                break
        self.stop()
        tail = self.log.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"the wire server did not start within {START_TIMEOUT:.0f}s:\n{tail}")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no flush; what the engine committed is all that remains."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        self._end(signal.SIGTERM)

    def _end(self, signum: int) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signum)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self.process.stdout.close()
        self.process = None
