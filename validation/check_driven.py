"""Each fault in a driven day at the reference scale: the first driven hour (issue 36).

    python validation/check_driven.py --speed 120

For each switch of tests/faulty_server.py (served over stdio, holding the reference day's
400-article synthetic corpus), ``kbsim drive`` drives the first hour of the reference day as
benchmarks/drive/reference.yaml sets it (people's saves, questions, hourly checks,
unpublishes through the admin tools, and agent edits one minute after an answer, each
replayed with its key by the driver's replay check), then ``kbsim check`` checks that
history. A day the driver stops (too late, a save that keeps conflicting, its own staleness
check against the day's ground truth) leaves a partial history, which is checked as far as it
is whole. The detection time is the simulated time (``sim_s``) and the wall time since the
day began (``ended_s``) of the earliest call the violated property names (the tool list is
read before the day). A fault the driver itself refuses before the day starts (its probe edit
with a stale version is applied: no compare-and-swap) writes no history, and is reported so.
``--keep DIR`` keeps the histories (``--reuse`` checks those again, driving only the missing ones).
Writes validation/CHECK_DRIVEN.md.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import faulty_server  # noqa: E402
import yaml  # noqa: E402

from kbsim.check import check_folders  # noqa: E402
from kbsim.drive.client import DriveError, ServerAddress  # noqa: E402
from kbsim.drive.day import DriveOptions, drive_day  # noqa: E402
from kbsim.drive.history import HistoryError, read_history  # noqa: E402
from kbsim.params import DayParams  # noqa: E402

SEED = 1
#: Why a fault can go unflagged in a day kbsim drive drives (said only for a fault that did).
UNFLAGGED = {
    "blind_edit": "kbsim drive's own probe (an edit with a stale expected_version, before the day) is applied, so "
                  "it refuses the server and writes no history; `kbsim check`'s own day flags it "
                  "(tests/test_check.py).",
    "event_before_visible": "the faulty server hides an edit from reads for 0.3 s and acknowledges the edit only "
                            "after that, so only a read sent while the edit is in flight can see it; kbsim drive "
                            "sends one call at a time, so none can (and the 0.35 s each edit takes makes the day "
                            "too late). `kbsim check`'s own day, with racing clients, flags it.",
    "replay_second_event": "the driver's replay check stops the day at the first replay (replay_mismatch), and the "
                           "poll that lists the replay's extra event is the history's last call: from its start on "
                           "(the cut) an event could be the write of a call in flight at the stop, which the history "
                           "does not record, so it is not held as a violation. Checked as if whole, the same history "
                           "flags `log.one_event_per_write`.",
}


def driven(fault: str, speed: float, keep: Path, reuse: bool) -> dict:
    """The first hour of the reference day driven against ``fault``, and its check."""
    server = [sys.executable, str(ROOT / "tests" / "faulty_server.py"), "--fault", fault, "--articles", "400",
              "--seed", str(SEED)]
    reference = yaml.safe_load((ROOT / "benchmarks" / "drive" / "reference.yaml").read_text())
    params = DayParams.model_validate({**reference, "day_hours": 1})
    out = keep / fault
    refused = keep / f"{fault}.refused"
    row: dict = {"fault": fault, "expected": faulty_server.FAULT_PROPERTY.get(fault), "speed": speed}
    failed = ""
    if not (reuse and (out.exists() or refused.exists())):
        try:
            drive_day(ServerAddress.stdio(server), params, SEED, out, DriveOptions(speed=speed))
        except DriveError as exc:
            refused.write_text(str(exc).splitlines()[0])
        except Exception as exc:  # noqa: BLE001 - a fault of the driver's own, raised after it wrote the history
            failed = f"; kbsim drive failed: {type(exc).__name__}: {str(exc).splitlines()[0]}"
            (keep / f"{fault}.failed").write_text(failed)
    if (keep / f"{fault}.failed").exists():
        failed = (keep / f"{fault}.failed").read_text()
    if refused.exists():
        row.update(outcome=f"refused by kbsim drive before the day: {refused.read_text()}")
        print(row, flush=True)
        return row
    try:
        card = check_folders([out])
    except HistoryError as exc:
        row.update(outcome=f"refused by kbsim check: {exc}")
        print(row, flush=True)
        return row
    history = read_history(out)
    calls = history.calls.set_index("call_id")
    row.update(outcome="checked" if history.complete else
               f"checked as partial: the day stopped ({history.meta.get('stopped_because')}{failed})",
               calls=card.calls, flagged=[v.property for v in card.violated])
    verdict = next((v for v in card.violated if v.property == row["expected"]), None)
    if verdict is not None:
        sim = calls.loc[verdict.call_ids(), "sim_s"].dropna()
        row.update(detected_sim_s=float(sim.min()) if len(sim) else "before",
                   detected_wall_s=float(calls.loc[verdict.call_ids(), "ended_s"].min()))
    print(row, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--speed", type=float, default=120.0)
    parser.add_argument("--faults", nargs="*", default=["none", *sorted(faulty_server.FAULT_PROPERTY)])
    parser.add_argument("--keep", type=Path, help="keep the histories in this folder")
    parser.add_argument("--reuse", action="store_true", help="check the histories kept in --keep, driving only "
                        "the faults that have none")
    parser.add_argument("--speed-for", action="append", default=[], metavar="FAULT=SPEED",
                        help="drive this fault at another speed (a server its fault slows down)")
    args = parser.parse_args()
    if args.reuse and args.keep is None:
        parser.error("--reuse needs --keep")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbsim-check-driven-") as scratch:
        keep = args.keep or Path(scratch)
        keep.mkdir(parents=True, exist_ok=True)
        speeds = dict(item.split("=", 1) for item in args.speed_for)
        rows = [driven(fault, float(speeds.get(fault, args.speed)), keep, args.reuse) for fault in args.faults]
    lines = [
        "# kbsim check on driven days: each fault in the reference day's first hour",
        "",
        f"Command: `python validation/check_driven.py {' '.join(sys.argv[1:])}`. Date: "
        f"{datetime.date.today().isoformat()}. Machine: {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}; {time.monotonic() - started:.0f} s"
        + (" (checking the histories an earlier run without --reuse drove, at the speeds shown)." if args.reuse
           else "."),
        "",
        "`kbsim drive` drives the first hour of the reference day as benchmarks/drive/reference.yaml sets it "
        "(seed 1, the 400-article synthetic corpus, agent edits one minute after 25% of answers, each replayed "
        "with its key by the driver's replay check) against tests/faulty_server.py over stdio, one fault at a "
        "time; `kbsim check` checks the history. A day the driver stopped is checked as far as it is whole "
        "(docs/check.md, \"Bad input\"). The detection time is the simulated time into the day, and the wall "
        "time since the drive began, of the earliest call the violated property names.",
        "",
        "| fault | speed | outcome | properties flagged | calls | detected (simulated) | detected (wall) |",
        "| --- | ---: | --- | --- | ---: | ---: | ---: |",
    ]
    for row in rows:
        flagged = ", ".join(f"`{p}`" for p in row.get("flagged", [])) or ("none" if "flagged" in row else "")
        at = row.get("detected_sim_s")
        wall = f"{row['detected_wall_s']:.1f} s" if "detected_wall_s" in row else ""
        if at == "before":
            detected = "before the day (its calls have no simulated time)"
        elif at is not None:
            detected = f"{at / 60:.1f} min"
        else:
            detected = "not flagged" if "flagged" in row and row["expected"] else ""
        lines.append(f"| {row['fault']} | {row['speed']:g} | {row['outcome']} | {flagged} | {row.get('calls', '')} "
                     f"| {detected} | {wall} |")
    missed = [row for row in rows if row["expected"] and row["expected"] not in row.get("flagged", [])]
    if missed:
        lines += ["", "Not flagged in a driven day:", ""]
        lines += [f"- `{row['fault']}`: {UNFLAGGED.get(row['fault'], 'no explanation recorded')}" for row in missed]
    (ROOT / "validation" / "CHECK_DRIVEN.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
