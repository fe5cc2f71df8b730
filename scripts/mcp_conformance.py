"""Run the official MCP conformance suite's tools-only server scenarios against ``kbsim serve --http``.

Usage: python scripts/mcp_conformance.py [--npx NPX] [SCENARIO ...]

Starts ``python -m kbsim serve --http 127.0.0.1:0`` (the OS picks the port), runs each
scenario with ``npx -y @modelcontextprotocol/conformance server --url URL --scenario S``
(the suite needs Node 22 or later on PATH), prints each scenario's ``Passed: N/M`` line,
and stops the server. Exit code 0 when every scenario passed, 1 otherwise. The results
are in docs/serve.md ("Conformance").
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "@modelcontextprotocol/conformance"
#: The scenarios that apply to a server of tools only (no resources, prompts, sampling...).
SCENARIOS = ("server-initialize", "tools-list", "ping", "dns-rebinding-protection", "json-schema-2020-12")
LISTENING = re.compile(r"kbsim serve: listening on (http://\S+/mcp)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS), metavar="SCENARIO")
    parser.add_argument("--npx", default="npx", help="the npx to run the suite with (default: npx on PATH)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kbsim-conformance-") as temp:
        errlog = Path(temp) / "server.log"
        with errlog.open("w") as err:
            server = subprocess.Popen([sys.executable, "-m", "kbsim", "serve", "--http", "127.0.0.1:0",
                                       "--log-level", "WARNING"], stdin=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        try:
            deadline = time.monotonic() + 60
            while (found := LISTENING.search(errlog.read_text())) is None:
                if server.poll() is not None or time.monotonic() > deadline:
                    print(f"kbsim serve did not start: {errlog.read_text()}", file=sys.stderr)
                    return 1
                time.sleep(0.1)
            url = found.group(1)
            failed = 0
            for scenario in args.scenarios:
                command = [args.npx, "-y", PACKAGE, "server", "--url", url, "--scenario", scenario]
                done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=temp)
                output = ANSI.sub("", done.stdout + done.stderr)
                passed = re.search(r"Passed: \d+/\d+.*", output)
                print(f"{scenario}: {passed.group(0) if passed else 'no result: ' + output.strip()[-300:]}")
                failed += done.returncode != 0 or passed is None
                for line in output.splitlines():
                    if "FAILURE" in line or line.strip().startswith("Error:"):
                        print(f"  {line.strip()}")
            print(f"{' '.join(command[:3])} against {url}: {len(args.scenarios) - failed} of "
                  f"{len(args.scenarios)} scenarios passed")
            return 1 if failed else 0
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


if __name__ == "__main__":
    sys.exit(main())
