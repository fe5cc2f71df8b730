"""Run the official MCP conformance suite's server scenarios against ``kbsim serve --http``.

Usage: python scripts/mcp_conformance.py [--suite PATH | --npx NPX] [--all] [SCENARIO ...]

Starts ``python -m kbsim serve --http 127.0.0.1:0`` (the OS picks the port), runs each
scenario (by default every one that applies to kbsim, :data:`APPLICABLE`; ``--all`` every
server scenario of the suite, for the table in docs/serve.md), prints each scenario's
``Passed: N/M`` line, and stops the server. ``make conformance`` installs the pinned suite
and a Node 22 into ``.conformance/`` and passes ``--suite``; without it the suite is run with
``npx -y`` (Node 22 or later on PATH). Exit code 0 when every applicable scenario run passed,
1 otherwise. The results are in docs/serve.md ("Conformance").
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "@modelcontextprotocol/conformance@0.1.16"
#: The server scenarios that apply to kbsim: a knowledge base of four tools, its articles as
#: resources with subscriptions, logging, and Streamable HTTP with resumable streams.
APPLICABLE = (
    "server-initialize", "ping", "tools-list", "logging-set-level", "resources-list",
    "server-sse-multiple-streams", "dns-rebinding-protection",
)
#: The suite's other server scenarios, and why each does not apply (docs/serve.md).
NOT_APPLICABLE = {
    "completion-complete": "completes an argument of the prompt test_prompt_with_arguments; kbsim has no "
                           "prompts (it completes its resource template's arguments, tests/test_serve_resources.py)",
    "tools-call-simple-text": "calls the suite's fixture tool test_simple_text",
    "tools-call-image": "calls the fixture tool test_image_content",
    "tools-call-audio": "calls the fixture tool test_audio_content",
    "tools-call-embedded-resource": "calls the fixture tool test_embedded_resource",
    "tools-call-mixed-content": "calls the fixture tool test_multiple_content_types",
    "tools-call-with-logging": "calls the fixture tool test_tool_with_logging",
    "tools-call-error": "calls the fixture tool test_error_handling; kbsim's error for an unknown tool "
                        "passes it, by accident",
    "tools-call-with-progress": "calls the fixture tool test_tool_with_progress",
    "tools-call-sampling": "calls the fixture tool test_sampling; kbsim asks nothing of the client",
    "tools-call-elicitation": "calls the fixture tool test_elicitation; kbsim asks nothing of the client",
    "json-schema-2020-12": "looks for the fixture tool json_schema_2020_12_tool; kbsim lists exactly its four",
    "elicitation-sep1034-defaults": "calls the fixture tool test_elicitation_sep1034_defaults",
    "elicitation-sep1330-enums": "calls the fixture tool test_elicitation_sep1330_enums",
    "server-sse-polling": "calls the fixture tool test_reconnection, which closes its stream mid-call; "
                          "kbsim's calls answer at once (stream resumption: tests/test_serve_streams.py)",
    "resources-read-text": "reads the fixture resource test://static-text",
    "resources-read-binary": "reads the fixture resource test://static-binary; articles are text",
    "resources-templates-read": "reads the fixture template test://template/{id}/data",
    "resources-subscribe": "subscribes to the fixture resource test://watched-resource, which kbsim refuses "
                           "as not its URI (subscriptions: tests/test_serve_resources.py)",
    "resources-unsubscribe": "unsubscribes from the fixture resource test://watched-resource",
    "prompts-list": "kbsim has no prompts",
    "prompts-get-simple": "gets the fixture prompt test_simple_prompt; kbsim has no prompts",
    "prompts-get-with-args": "gets the fixture prompt test_prompt_with_arguments",
    "prompts-get-embedded-resource": "gets the fixture prompt test_prompt_with_embedded_resource",
    "prompts-get-with-image": "gets the fixture prompt test_prompt_with_image",
}
LISTENING = re.compile(r"kbsim serve: listening on (http://\S+/mcp)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO")
    parser.add_argument("--suite", type=Path, help="the suite's conformance executable (make conformance: "
                        ".conformance/node_modules/.bin/conformance, beside its Node 22)")
    parser.add_argument("--npx", default="npx", help="without --suite: the npx to run the suite with")
    parser.add_argument("--all", action="store_true", help="every server scenario, applicable or not")
    args = parser.parse_args()
    scenarios = args.scenarios or (list(APPLICABLE) + list(NOT_APPLICABLE) if args.all else list(APPLICABLE))
    unknown = [s for s in scenarios if s not in APPLICABLE and s not in NOT_APPLICABLE]
    if unknown:
        known = ", ".join((*APPLICABLE, *NOT_APPLICABLE))
        parser.error(f"unknown scenario {unknown[0]!r}; the server scenarios: {known}")
    env = dict(os.environ)
    if args.suite is not None:
        suite = args.suite.absolute()  # not resolved: its folder (node_modules/.bin) holds the suite's node
        if not suite.exists():
            parser.error(f"--suite {args.suite}: no such file (make conformance installs it)")
        env["PATH"] = f"{suite.parent}{os.pathsep}{env.get('PATH', '')}"  # its own node first
        runner = [str(suite)]
    else:
        runner = [args.npx, "-y", PACKAGE]
    with tempfile.TemporaryDirectory(prefix="kbsim-conformance-") as temp:
        errlog = Path(temp) / "server.log"
        with errlog.open("w") as err:
            server = subprocess.Popen([sys.executable, "-m", "kbsim", "serve", "--http", "127.0.0.1:0",
                                       "--log-level", "WARNING"], stdin=subprocess.DEVNULL, stderr=err, cwd=ROOT)
        try:
            deadline = time.monotonic() + 120
            while (found := LISTENING.search(errlog.read_text())) is None:
                if server.poll() is not None or time.monotonic() > deadline:
                    print(f"kbsim serve did not start: {errlog.read_text()}", file=sys.stderr)
                    return 1
                time.sleep(0.1)
            url = found.group(1)
            failed = 0
            for scenario in scenarios:
                done = subprocess.run([*runner, "server", "--url", url, "--scenario", scenario], capture_output=True,
                                      text=True, timeout=300, cwd=temp, env=env)
                output = ANSI.sub("", done.stdout + done.stderr)
                passed = re.search(r"Passed: \d+/\d+.*", output)
                applies = scenario in APPLICABLE
                verdict = passed.group(0) if passed else "no result: " + output.strip()[-300:]
                note = "" if applies else f"  (does not apply: {NOT_APPLICABLE[scenario]})"
                print(f"{scenario}: {verdict}{note}", flush=True)
                if applies and (done.returncode != 0 or passed is None):
                    failed += 1
                    for line in output.splitlines():
                        if "FAILURE" in line or line.strip().startswith("Error:"):
                            print(f"  {line.strip()[:300]}")
            ran = [s for s in scenarios if s in APPLICABLE]
            print(f"conformance ({PACKAGE}) against {url}: {len(ran) - failed} of {len(ran)} applicable "
                  "scenarios passed")
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
