"""Each fault in a driven day at the reference scale: the first driven hour (issue 36).

    python validation/check_driven.py --speed 120

For each switch of tests/faulty_server.py (served over stdio, holding the reference day's
400-article synthetic corpus), ``kbsim drive`` drives the first hour of the reference day
(people's saves, questions, hourly checks, unpublishes through the admin tools), then
``kbsim check`` checks that history. The detection time is the simulated time (``sim_s``)
of the earliest call the violated property names (the tool list is read before the day). A
fault the driver itself refuses before the day starts (its probe edit with a stale version is
applied: no compare-and-swap) writes no history, and is reported so; so is a day the driver
stops (its own checks against the day's ground truth). Writes validation/CHECK_DRIVEN.md.
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

from kbsim.check import check_folders  # noqa: E402
from kbsim.drive.client import DriveError, ServerAddress  # noqa: E402
from kbsim.drive.day import DriveOptions, drive_day  # noqa: E402
from kbsim.drive.history import read_history  # noqa: E402
from kbsim.params import DayParams  # noqa: E402

SEED = 1


def driven(fault: str, speed: float, scratch: Path) -> dict:
    """The first hour of the reference day driven against ``fault``, and its check."""
    server = [sys.executable, str(ROOT / "tests" / "faulty_server.py"), "--fault", fault, "--articles", "400",
              "--seed", str(SEED)]
    params = DayParams.model_validate({"day_hours": 1})
    out = scratch / fault
    row: dict = {"fault": fault, "expected": faulty_server.FAULT_PROPERTY.get(fault)}
    try:
        result = drive_day(ServerAddress.stdio(server), params, SEED, out, DriveOptions(speed=speed))
    except DriveError as exc:
        row.update(outcome=f"refused by kbsim drive before the day: {str(exc).splitlines()[0]}")
        return row
    if not result.complete:
        row.update(outcome=f"the day stopped ({result.stopped_because}): {result.message}")
        return row
    card = check_folders([out])
    calls = read_history(out).calls.set_index("call_id")
    row.update(outcome="checked", calls=card.calls, flagged=[v.property for v in card.violated])
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
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kbsim-check-driven-") as scratch:
        rows = [driven(fault, args.speed, Path(scratch)) for fault in args.faults]
    lines = [
        "# kbsim check on driven days: each fault in the reference day's first hour",
        "",
        f"Command: `python validation/check_driven.py --speed {args.speed:g}`. Date: "
        f"{datetime.date.today().isoformat()}. Machine: {platform.system()} {platform.machine()}, Python "
        f"{platform.python_version()}; {time.monotonic() - started:.0f} s.",
        "",
        "`kbsim drive` drives the first hour of the reference day (seed 1, the 400-article synthetic corpus) "
        "against tests/faulty_server.py over stdio, one fault at a time; `kbsim check` checks the history. "
        "The detection time is the simulated time of the earliest call the violated property names.",
        "",
        "| fault | outcome | properties flagged | calls | detected at (simulated) |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for row in rows:
        flagged = ", ".join(f"`{p}`" for p in row.get("flagged", [])) or ("none" if "flagged" in row else "")
        at = row.get("detected_sim_s")
        if at == "before":
            detected = "before the day (its calls have no simulated time)"
        elif at is not None:
            detected = f"{at / 60:.1f} min"
        else:
            detected = "" if row["outcome"] != "checked" else "not flagged"
        lines.append(f"| {row['fault']} | {row['outcome']} | {flagged} | {row.get('calls', '')} | {detected} |")
    (ROOT / "validation" / "CHECK_DRIVEN.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
