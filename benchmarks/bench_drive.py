"""The driver's per-call cost over localhost: ``kbsim drive``'s tool client (kbsim.drive.client)
against ``kbsim serve`` over Streamable HTTP and over stdio.

    python benchmarks/bench_drive.py --calls 300

For each transport, interleaved call by call on one server: the round trip through the
driver's ToolSession (recording every call), the same call through the bare SDK session
on the same event-loop thread (no recording, no mapping), and the store's own
``Client.call`` in process (what the server spends on the tool). The driver's overhead is
the first minus the second; the transport's, the second minus the third.
Writes the section "kbsim drive: per-call overhead" of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from drive_servers import http_server, serve_command  # noqa: E402
from results_file import machine_line, write_section  # noqa: E402

from kbsim.drive.client import McpConnection, ServerAddress, _json_bytes, tool_payload  # noqa: E402
from kbsim.drive.history import CallRecorder  # noqa: E402
from kbsim.drive.remote import FieldMap  # noqa: E402
from kbsim.params import DayParams  # noqa: E402
from kbsim.serve.server import served_corpus  # noqa: E402
from kbsim.sim.world import starting_knowledge_base  # noqa: E402

READ = {"knowledge_base_id": "kb-1", "article_id": "art-000007"}


def measure(address: ServerAddress, calls: int) -> dict[str, np.ndarray]:
    """Seconds per call: through the driver, through the bare SDK session, in process."""
    starting = starting_knowledge_base(served_corpus(DayParams(), None).corpus, 1)
    local = starting.template.copy().client(grants={"kb-1"}, clock=lambda: 0.0)
    driver, bare, store, own = [], [], [], []
    recorder = CallRecorder()
    with McpConnection(address, recorder, timeout_s=60) as connection:
        session = connection.session("bench")
        raw = session._box.session
        portal = connection._portal
        for _ in range(20):  # warm up
            session.call("read_knowledge_article", READ)
        for _ in range(calls):
            t = time.perf_counter()
            session.call("read_knowledge_article", READ)
            driver.append(time.perf_counter() - t)
            t = time.perf_counter()
            portal.call(raw.call_tool, "read_knowledge_article", READ)
            bare.append(time.perf_counter() - t)
            t = time.perf_counter()
            local.call("read_knowledge_article", READ)
            store.append(time.perf_counter() - t)
        # the driver's own work on one answer, outside the SDK: what call_sized adds to a call
        result = portal.call(raw.call_tool, "read_knowledge_article", READ)
        for _ in range(calls):
            t = time.perf_counter()
            call_id, started_s, sim_s = recorder.begin()
            sent = _json_bytes({"method": "tools/call", "params": {"name": "read_knowledge_article",
                                                                   "arguments": READ}})
            payload = tool_payload(result)
            received = len(result.model_dump_json(by_alias=True, exclude_none=True).encode())
            recorder.finish(call_id, started_s, sim_s, client="bench", actor="bench", tool="read_knowledge_article",
                            arguments=READ, ok=True, error_code=None, result=payload, bytes_sent=sent,
                            bytes_received=received)
            FieldMap().normalised("read_knowledge_article", payload)
            _json_bytes(payload)
            own.append(time.perf_counter() - t)
    return {"driver": np.array(driver), "bare": np.array(bare), "store": np.array(store), "own": np.array(own)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    rows = []
    with http_server(Path("/tmp") / "bench_drive_serve.log") as url:
        results = {"HTTP": measure(ServerAddress.http(url), args.calls)}
    results["stdio"] = measure(ServerAddress.stdio(serve_command()), args.calls)
    for transport, r in results.items():
        overhead = r["driver"] - r["bare"]
        p = lambda a, q: f"{np.percentile(a, q) * 1000:.2f} ms"  # noqa: E731
        us = lambda a, q: f"{np.percentile(a, q) * 1e6:.0f} µs"  # noqa: E731
        rows.append(f"| {transport} | {p(r['driver'], 50)} | {p(r['driver'], 99)} | {p(r['bare'], 50)} | "
                    f"{p(r['bare'], 99)} | {p(overhead, 50)} | {us(r['own'], 50)} | {us(r['own'], 99)} | "
                    f"{us(r['store'], 50)} |")
        print(rows[-1], flush=True)
    body = "\n".join([
        f"{machine_line()} Command: `python benchmarks/bench_drive.py --calls {args.calls}`.",
        "",
        f"{args.calls} `read_knowledge_article` calls per transport against `kbsim serve` (the sample help desk) on "
        "127.0.0.1, interleaved call by call: through the driver's recording tool client, through the bare SDK "
        "session on the same event-loop thread, and through the store's own client in process. The driver's "
        "overhead is measured twice: the median difference of the first two, call by call (the p99 of a "
        "difference is the transport's jitter, so it is not given), and the driver's own work on an answer "
        "outside the SDK, timed alone on a captured result (numbering, canonical JSON with the content "
        "digested, the calls row, the field map, the sizes), p50 and p99.",
        "",
        "| transport | through the driver p50 | p99 | bare SDK p50 | p99 | difference p50 | "
        "driver's own work p50 | p99 | store in process p50 |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        f"Load average at the end of the run: {os.getloadavg()[0]:.1f} on 2 cores (other work beside it): the "
        "round trips and the p99s move with it; the driver's own work is the figure that is the driver's.",
    ])
    write_section("kbsim drive: per-call overhead", body)


if __name__ == "__main__":
    main()
