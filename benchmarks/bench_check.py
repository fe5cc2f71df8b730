"""``kbsim check`` over a 100,000-call history: the issue 36 target (under 10 s on 2 cores).

    python benchmarks/bench_check.py --calls 100000

The history is the check's own day (kbsim.check.day.run_check_day: probes, racing clients,
a tailing reader), driven fast against kbsim's in-memory store in process: each client is a
recording session that calls the store's own tool client under one lock (as ``kbsim serve``
does) and records every call as the MCP client would (kbsim.drive.history.CallRecorder:
canonical JSON, content digested). The day's rounds are sized to reach the number of calls
asked for. Then the history is written, and checked as ``kbsim check HISTORY`` checks it
(read, parse, every property), timed in wall and CPU seconds, each part alone.
Writes the section "kbsim check over a 100,000-call history" of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from results_file import machine_line, write_section  # noqa: E402

from kbsim.check import CHECKS, check_folders, observe  # noqa: E402
from kbsim.check.day import CheckDayOptions, check_day_meta, run_check_day  # noqa: E402
from kbsim.drive.client import _json_bytes  # noqa: E402
from kbsim.drive.history import CallRecorder, read_history, write_history  # noqa: E402
from kbsim.params import DayParams  # noqa: E402
from kbsim.serve.admin import admin_call, admin_tool_list  # noqa: E402
from kbsim.serve.server import build_store, tool_list  # noqa: E402
from kbsim.store import ToolError  # noqa: E402

KB_ID = "kb-1"


class LocalSession:
    """A recording session on the in-memory store: ToolSession's face, no transport."""

    def __init__(self, client: str, store, tool_client, lock: threading.Lock, recorder: CallRecorder,
                 clock) -> None:
        self.client = client
        self.store, self.tool_client, self.lock = store, tool_client, lock
        self.recorder, self.clock = recorder, clock

    def list_tools(self, actor: str = "probe") -> list[dict[str, Any]]:
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tool_list() + admin_tool_list()]
        call_id, started, sim = self.recorder.begin()
        self.recorder.finish(call_id, started, sim, client=self.client, actor=actor, tool="tools/list", arguments={},
                             ok=True, error_code=None, result={"tools": [t["name"] for t in tools]}, bytes_sent=40,
                             bytes_received=_json_bytes(tools))
        return tools

    def call(self, tool: str, arguments: dict[str, Any], actor: str | None = None) -> Any:
        call_id, started, sim = self.recorder.begin()
        try:
            with self.lock:
                if tool.endswith("knowledge_article") and tool.startswith(("publish", "unpublish")):
                    payload = admin_call(self.store, frozenset({KB_ID}), tool, arguments, self.clock())
                else:
                    payload = self.tool_client.call(tool, arguments)
        except ToolError as error:
            self.recorder.finish(call_id, started, sim, client=self.client, actor=actor or "call", tool=tool,
                                 arguments=arguments, ok=False, error_code=error.code, result=error.to_dict(),
                                 bytes_sent=100, bytes_received=100)
            raise
        self.recorder.finish(call_id, started, sim, client=self.client, actor=actor or "call", tool=tool,
                             arguments=arguments, ok=True, error_code=None, result=payload, bytes_sent=100,
                             bytes_received=100)
        return payload


def synthesise(calls: int, folder: Path, racers: int = 8, hot: int = 20) -> tuple[Path, float]:
    """A check day of about ``calls`` calls against the in-memory store, written to ``folder``."""
    store = build_store(DayParams.model_validate({"corpus": {"articles": 100}}), 1, kb_id=KB_ID)
    t0 = time.monotonic()
    clock = lambda: (time.monotonic() - t0) * 60.0  # noqa: E731 - kbsim serve's default speed
    tool_client = store.client(grants={KB_ID}, clock=clock)
    lock, recorder = threading.Lock(), CallRecorder()
    # a round is a read, an edit, a replay one time in three, and the tail's polls and reads: about 3.5 calls
    rounds = max(1, int(calls / (3.5 * racers)))
    options = CheckDayOptions(racers=racers, rounds=rounds, hot=hot, seed=1)
    started = time.monotonic()
    listed = run_check_day(lambda name: LocalSession(name, store, tool_client, lock, recorder, clock), options)
    wall = time.monotonic() - started
    meta = check_day_meta(listed, {"transport": "in-process", "name": "kbsim", "version": "memory"}, options, recorder)
    write_history(folder, meta, recorder.frame(), {})
    return folder, wall


def timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function(*args)
    return value, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--write", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder, drive_wall = synthesise(args.calls, Path(scratch) / "history")
        card, wall, cpu = timed(check_folders, [folder])
        history, read_wall, read_cpu = timed(read_history, folder)
        observed, observe_wall, observe_cpu = timed(observe, history)
        parts = []
        for name, check in CHECKS.items():
            _, part_wall, part_cpu = timed(check, observed)
            parts.append((name, part_wall, part_cpu))
    n = card.calls
    print(json.dumps({"calls": n, "wall_s": wall, "cpu_s": cpu, "violated": [v.property for v in card.violated]}))
    rows = [f"| read the history (Parquet) | {read_wall:.2f} s | {read_cpu:.2f} s |",
            f"| parse the calls into per-tool tables | {observe_wall:.2f} s | {observe_cpu:.2f} s |"]
    rows += [f"| `{name}` | {w:.2f} s | {c:.2f} s |" for name, w, c in parts]
    statuses = (", ".join(f"{v.property} {v.status}" for v in card.verdicts if v.status != "holds")
                or "every property holds")
    body = f"""{machine_line()} Command: `python benchmarks/bench_check.py --calls {args.calls}`.

The history: the check's own day (probes, 8 racing clients on 20 hot articles, a tailing reader) driven
in process against kbsim's in-memory store, every call recorded as the MCP client records it: {n:,} calls
({drive_wall:.1f} s to drive). `kbsim check HISTORY` over it (read, parse, every property): **{wall:.2f} s wall,
{cpu:.2f} s CPU** (target: under 10 s on 2 cores). Verdicts: {statuses}.

Each part timed alone, after the whole:

| part | wall | CPU |
| --- | ---: | ---: |
{chr(10).join(rows)}

Load average at the end of the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work beside it)."""
    if args.write:
        write_section("kbsim check over a 100,000-call history", body)
    print(body)


if __name__ == "__main__":
    main()
