"""Drive the reference day against ``kbsim serve --http --db`` (a fresh database per seed,
127.0.0.1, a free port, with --admin-tools), one seed after another, then write the page
"your server against the model" (docs/your-server.md) with ``kbsim drive-report``.

    python benchmarks/drive_reference.py --seeds 1,2,3,4,5 --speed 60 --out drive-runs

Each day takes day_hours * 3600 / speed wall seconds (8 min at --speed 60). Histories go
to OUT/seed-N; a seed whose history is complete already is not driven again.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "benchmarks" / "drive" / "reference.yaml"
LISTENING = re.compile(r"kbsim serve: listening on (http://\S+/mcp)")


def drive_seed(seed: int, speed: float, out: Path, transport: str) -> int:
    """Serve a fresh knowledge base for ``seed`` and drive its day; the drive's exit status."""
    out.parent.mkdir(parents=True, exist_ok=True)
    db = out.parent / f"seed-{seed}.db"
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        path.unlink(missing_ok=True)
    serve = ["--corpus", "synthetic", "--seed", str(seed), "--config", str(CONFIG), "--admin-tools",
             "--log-level", "WARNING"]
    drive = [sys.executable, "-m", "kbsim", "drive", "--corpus", "synthetic", "--seed", str(seed), "--config",
             str(CONFIG), "--speed", str(speed), "--out", str(out), "--yes-edit-this-server"]
    if transport == "stdio":
        return subprocess.call([*drive, "--", sys.executable, "-m", "kbsim", "serve", "--db", str(db), *serve],
                               cwd=ROOT)
    log = out.parent / f"seed-{seed}.serve.log"
    with log.open("w") as err:
        server = subprocess.Popen([sys.executable, "-m", "kbsim", "serve", "--http", "127.0.0.1:0", "--db", str(db),
                                   *serve], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                  cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while (found := LISTENING.search(log.read_text())) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"kbsim serve did not start: {log.read_text()[-500:]}")
            time.sleep(0.2)
        return subprocess.call([*drive, "--url", found.group(1)], cwd=ROOT)
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--speed", type=float, default=60.0)
    parser.add_argument("--transport", choices=("http", "stdio"), default="http")
    parser.add_argument("--out", type=Path, default=ROOT / "drive-runs")
    parser.add_argument("--page", type=Path, default=ROOT / "docs" / "your-server.md")
    args = parser.parse_args()
    folders = []
    for seed in (int(s) for s in args.seeds.split(",")):
        out = args.out / f"seed-{seed}"
        done = (out / "history.json").exists() and '"complete": true' in (out / "history.json").read_text()
        if not done:
            if out.exists():
                raise SystemExit(f"{out}: a partial history; move it away to drive seed {seed} again")
            started = time.monotonic()
            status = drive_seed(seed, args.speed, out, args.transport)
            print(f"seed {seed}: exit {status} in {time.monotonic() - started:.0f} s wall", flush=True)
        folders.append(str(out))
    command = f"python benchmarks/drive_reference.py --seeds {args.seeds} --speed {args.speed:g}"
    subprocess.check_call([sys.executable, "-m", "kbsim", "drive-report", *folders, "--out", str(args.page),
                           "--command", command], cwd=ROOT)


if __name__ == "__main__":
    main()
