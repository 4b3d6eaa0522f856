"""An answer's head and body in one write or in two, side by side (issue 26).

    .venv/bin/python bench/one_write.py [--windows 10] [--seconds 4] [--connections 50]

uvicorn writes an answer's status line and headers, then its body: two writes, two system calls
and two TCP segments. ``app.serve.OneWrite`` holds the head until the body comes, so that a
whole answer goes out in one write. This measures what that saves, on a box whose speed drifts
by more than the difference: two servers run at once, each ``app.serve``'s protocol on uvloop
with one worker, one writing each answer once and the other as uvicorn does; a client of
``--connections`` keep-alive connections sends a move-sized request to one of them for a
window, then to the other, in turn. Each server's CPU per answer (from /proc) and the client's
are compared window by window. The answer is a move's: ~1.3 KB of JSON with the app's headers.
Local only (127.0.0.1) and bounded; both servers are stopped whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import HOST, ROOT, cpu_ticks, free_port, machine_facts, stop_server
from load import wait_until_up

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"  # only for the facts
BODY = json.dumps({"game": "x" * 22, "piles": ["QS"] * 300}).encode()[:1300]
HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(BODY)).encode()),
    (b"vary", b"Accept-Encoding, HX-Request"),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=()"),
    (b"content-language", b"en"),
    (b"x-request-id", b"0123456789abcdef"),
]
MOVE = b'{"from": "t5", "to": "t9", "count": 1, "version": 0}'
REQUEST = (
    b"POST /api/games/abc/moves HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    b"authorization: Bearer " + b"t" * 43 + b"\r\naccept-encoding: gzip, deflate, br\r\n"
    b"content-length: " + str(len(MOVE)).encode() + b"\r\n\r\n" + MOVE
)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A move's answer, whatever was asked."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


def serve(port: int, way: str) -> None:
    """One server: ``app.serve``'s protocol, with (``one``) or without (``two``) OneWrite."""
    import uvicorn
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from app.serve import TimedHttpProtocol

    if way == "two":  # the protocol as it was: uvicorn's own cycle, two writes an answer
        TimedHttpProtocol.on_headers_complete = HttpToolsProtocol.on_headers_complete  # type: ignore[method-assign]
    uvicorn.run(
        app,
        host=HOST,
        port=port,
        http=TimedHttpProtocol,
        loop="uvloop",
        log_level="warning",
        access_log=False,
        lifespan="off",
    )


async def _one_connection(port: int, until: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    try:
        while time.monotonic() < until:
            writer.write(REQUEST)
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])
            await reader.readexactly(length)
            counts[0] += 1
    finally:
        writer.close()


async def window(port: int, pid: int, seconds: float, connections: int) -> dict[str, float]:
    counts = [0]
    until = time.monotonic() + seconds
    ticks, cpu = cpu_ticks(pid), time.process_time()
    await asyncio.gather(*(_one_connection(port, until, counts) for _ in range(connections)))
    server_s = (cpu_ticks(pid) - ticks) / os.sysconf("SC_CLK_TCK")
    client_s = time.process_time() - cpu
    return {
        "answers/s": counts[0] / seconds,
        "server us/answer": 1e6 * server_s / max(counts[0], 1),
        "client us/answer": 1e6 * client_s / max(counts[0], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", type=int, default=10, help="windows on each server")
    parser.add_argument("--seconds", type=float, default=4.0, help="each window's length")
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--serve", choices=("one", "two"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.port, args.serve)
        return 0
    if not (1 <= args.windows <= 50 and 0.5 <= args.seconds <= 30 and args.connections <= 500):
        parser.error("--windows 1..50, --seconds 0.5..30, --connections up to 500")
    import uvloop

    servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = {}
    log = Path(tempfile.mkstemp(prefix="ph-one-write-", suffix=".log")[1])
    try:
        for way in ("one", "two"):
            port = free_port()
            command = [sys.executable, __file__, "--serve", way, "--port", str(port)]
            with log.open("ab") as out:
                servers[way] = (
                    port,
                    subprocess.Popen(
                        command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                        start_new_session=True,
                    ),
                )  # fmt: skip
        for port, server in servers.values():
            uvloop.run(wait_until_up(port, server, log))
        results: dict[str, list[dict[str, float]]] = {"one": [], "two": []}
        for n in range(args.windows):
            order = ("one", "two") if n % 2 == 0 else ("two", "one")
            for way in order:
                port, server = servers[way]
                results[way].append(
                    uvloop.run(window(port, server.pid, args.seconds, args.connections))
                )
    finally:
        for _, server in servers.values():
            stop_server(server)
    report: dict[str, Any] = {"machine": machine_facts(DEFAULT_DB), "command": sys.argv}
    for key in ("answers/s", "server us/answer", "client us/answer"):
        report[key] = {
            way: round(statistics.median(r[key] for r in rs), 1) for way, rs in results.items()
        }
    pairs = list(zip(results["one"], results["two"], strict=True))
    report["windows where one write cost the server less"] = (
        f"{sum(a['server us/answer'] < b['server us/answer'] for a, b in pairs)} of {len(pairs)}"
    )
    report["windows where one write cost the client less"] = (
        f"{sum(a['client us/answer'] < b['client us/answer'] for a, b in pairs)} of {len(pairs)}"
    )
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
