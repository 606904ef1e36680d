"""Serve mongoeco over the MongoDB wire protocol on loopback, for the wire test tier.

Real pymongo clients talk to it exactly as to a MongoDB server. With ``--data DIR`` the
SQLite engine keeps its data in DIR, so a server killed and started again on the same
port finds every write it acknowledged (the fault tests rely on it); without it the data
lives in memory. Prints ``ready mongodb://HOST:PORT/`` on stdout once it accepts
connections and stops cleanly on SIGTERM or SIGINT.

Needs Python >= 3.13 and mongoeco: ``make test`` sets both up in ``.venv-wire``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path

from mongoeco.engines import MemoryEngine, SQLiteEngine
from mongoeco.wire import AsyncMongoEcoProxyServer


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (loopback)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one")
    parser.add_argument("--data", type=Path, help="directory of the SQLite engine's file "
                        "(kept across restarts); omitted: in memory")
    parser.add_argument("--parent", type=int, help="stop when the process with this pid "
                        "is gone, so a killed test run leaves no server behind")
    return parser.parse_args()


async def watch_parent(pid: int, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            stop.set()
        await asyncio.sleep(1.0)


async def serve(args: argparse.Namespace) -> None:
    if args.data is None:
        engine = MemoryEngine()
    else:
        args.data.mkdir(parents=True, exist_ok=True)
        engine = SQLiteEngine(str(args.data / "mongoeco.sqlite3"))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with AsyncMongoEcoProxyServer(engine=engine, host=args.host, port=args.port) as server:
        address = server.address
        print(f"ready mongodb://{address.host}:{address.port}/", flush=True)
        watcher = asyncio.create_task(watch_parent(args.parent, stop)) if args.parent else None
        await stop.wait()
        if watcher is not None:
            watcher.cancel()


if __name__ == "__main__":
    asyncio.run(serve(parse_args()))
