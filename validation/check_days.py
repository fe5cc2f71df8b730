"""Does ``kbsim check`` cry wolf, and how soon does it see each fault? (issue 36)

    python validation/check_days.py --days 20

Clean days: ``--days`` check days (kbsim.check.day, its default size) against ``kbsim serve
--http --admin-tools --db FILE`` (SQLite) and as many against ``kbsim serve --http
--admin-tools`` (in memory), each server started once and driven day after day on 127.0.0.1;
every violated property on a clean day is a false alarm. Faults: one check day against each
switch of tests/faulty_server.py (served in process); the detection time is the wall time,
from the day's start, at which the earliest call the violated property names ended, and
whether exactly that property was flagged. Writes validation/CHECK.md and
validation/check_days.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import faulty_server  # noqa: E402
from drive_servers import http_server  # noqa: E402

from kbsim.check import check_folders  # noqa: E402
from kbsim.check.day import CheckDayOptions, check_day  # noqa: E402
from kbsim.drive.client import ServerAddress  # noqa: E402
from kbsim.drive.history import read_history  # noqa: E402

OPTIONS = CheckDayOptions()


def clean_days(url: str, days: int, scratch: Path, label: str) -> list[dict]:
    """``days`` check days against ``url``; per day its calls and the properties it flagged."""
    rows = []
    for day in range(days):
        folder = check_day(ServerAddress.http(url), scratch / f"{label}-{day}",
                           CheckDayOptions(seed=day + 1, rounds=OPTIONS.rounds, racers=OPTIONS.racers))
        card = check_folders([folder])
        rows.append({"server": label, "day": day + 1, "calls": card.calls,
                     "violated": [v.property for v in card.violated],
                     "not_observable": [v.property for v in card.verdicts if v.status == "not observable"]})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def fault_day(fault: str, scratch: Path) -> dict:
    """One check day against ``fault``: what was flagged, and when."""
    with faulty_server.serving(fault) as url:
        folder = check_day(ServerAddress.http(url), scratch / f"fault-{fault}", OPTIONS)
    card = check_folders([folder])
    calls = read_history(folder).calls.set_index("call_id")
    expected = faulty_server.FAULT_PROPERTY[fault]
    flagged = [v.property for v in card.violated]
    row = {"fault": fault, "expected": expected, "flagged": flagged, "calls": card.calls,
           "exactly": flagged == [expected]}
    verdict = next((v for v in card.violated if v.property == expected), None)
    if verdict is not None:
        ids = verdict.call_ids()
        first = min(ids, key=lambda i: calls.loc[i, "ended_s"])
        row.update(detected_s=float(calls.loc[ids, "ended_s"].min()), first_call=int(first),
                   day_s=float(calls["ended_s"].max()), evidence_calls=len(ids))
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=20, help="clean days per server (default 20)")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbsim-check-days-") as scratch:
        scratch = Path(scratch)
        faults = [fault_day(fault, scratch) for fault in sorted(faulty_server.FAULT_PROPERTY)]
        clean = []
        with http_server(scratch / "sqlite.log", "--db", str(scratch / "kb.sqlite"), "--admin-tools",
                         "--corpus", "synthetic") as url:
            clean += clean_days(url, args.days, scratch, "kbsim serve --http --db (SQLite)")
        with http_server(scratch / "memory.log", "--admin-tools", "--corpus", "synthetic") as url:
            clean += clean_days(url, args.days, scratch, "kbsim serve --http (in memory)")
    elapsed = time.monotonic() - started
    false_alarms = sum(len(row["violated"]) for row in clean)
    days_with_alarm = sum(1 for row in clean if row["violated"])
    calls = sum(row["calls"] for row in clean)
    result = {"days_per_server": args.days, "clean_days": len(clean), "clean_calls": calls,
              "false_alarms": false_alarms, "days_with_a_false_alarm": days_with_alarm,
              "faults": faults, "clean": clean, "options": {"racers": OPTIONS.racers, "rounds": OPTIONS.rounds,
                                                            "hot": OPTIONS.hot}}
    (ROOT / "validation" / "check_days.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = [
        "# kbsim check: false alarms on clean days, and each fault's detection",
        "",
        f"Command: `python validation/check_days.py --days {args.days}`. Date: {datetime.date.today().isoformat()}. "
        f"Machine: {platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; {elapsed:.0f} s.",
        "",
        f"Each day is `kbsim check`'s own day at its default size ({OPTIONS.racers} racing clients x "
        f"{OPTIONS.rounds} rounds on {OPTIONS.hot} hot articles, after the probes), over Streamable HTTP on "
        "127.0.0.1.",
        "",
        "## Clean days",
        "",
        f"{len(clean)} clean days ({args.days} against each server), {calls:,} calls: **{false_alarms} false "
        f"violations** ({days_with_alarm} days with any).",
        "",
        "| server | days | calls | false violations | properties not observable |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for label in dict.fromkeys(row["server"] for row in clean):
        rows = [row for row in clean if row["server"] == label]
        unobserved = sorted({p for row in rows for p in row["not_observable"]}) or ["none"]
        lines.append(f"| {label} | {len(rows)} | {sum(r['calls'] for r in rows):,} | "
                     f"{sum(len(r['violated']) for r in rows)} | {', '.join(unobserved)} |")
    lines += [
        "",
        "## Faults (tests/faulty_server.py, one check day each)",
        "",
        "The detection time is wall seconds from the day's start to the end of the earliest call the verdict "
        "names, of a day lasting the time in the last column.",
        "",
        "| fault | property flagged | exactly that one | detected at | first call | calls of the day | day lasted |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for row in faults:
        flagged = ", ".join(f"`{p}`" for p in row["flagged"]) or "none"
        detected = f"{row['detected_s']:.2f} s" if "detected_s" in row else "not detected"
        lines.append(f"| {row['fault']} | {flagged} | {'yes' if row['exactly'] else 'no'} | {detected} | "
                     f"{row.get('first_call', '')} | {row['calls']} | {row.get('day_s', 0):.1f} s |")
    (ROOT / "validation" / "CHECK.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
