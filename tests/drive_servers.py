"""Servers the drive tests (and the check tests) talk to: ``kbsim serve`` over Streamable
HTTP on a free port of 127.0.0.1, ``kbsim serve``'s stdio command, and a bare HTTP server
that answers every request with one status (a 401, a 403). Every wait is bounded and every
process stopped."""

from __future__ import annotations

import http.server
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
LISTENING = re.compile(r"kbsim serve: listening on (http://\S+/mcp)")


def serve_command(*args: str) -> list[str]:
    """``kbsim serve ARGS`` over stdio, as a command line for ``kbsim drive -- ...``."""
    return [sys.executable, "-m", "kbsim", "serve", "--log-level", "WARNING", *args]


@contextmanager
def http_server(errlog: Path, *args: str, env: dict[str, str] | None = None,
                expect_clean_stop: bool = False) -> Iterator[str]:
    """Start ``kbsim serve --http 127.0.0.1:0 ARGS``; yield its endpoint URL; always stop it.

    ``env`` replaces the server's environment (default: this process's). With
    ``expect_clean_stop`` the server must stop within the timeout of SIGINT and exit 130.
    """
    with errlog.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "kbsim", "serve", "--http", "127.0.0.1:0", "--log-level", "WARNING", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO, env=env,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while (found := LISTENING.search(errlog.read_text())) is None:
            assert process.poll() is None, f"the server exited ({process.returncode}): {errlog.read_text()}"
            assert time.monotonic() < deadline, f"no URL within {START_TIMEOUT_S:g} s: {errlog.read_text()}"
            time.sleep(0.1)
        yield found.group(1)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_TIMEOUT_S)
            assert not expect_clean_stop, f"the server did not stop within {STOP_TIMEOUT_S:g} s of SIGINT"
        if expect_clean_stop:
            assert process.returncode == 130, errlog.read_text()


@contextmanager
def status_server(status: int) -> Iterator[str]:
    """A plain HTTP server on a free port answering every request with ``status``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self.rfile.read(length)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET = do_DELETE = _answer

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_server() -> Iterator[str]:
    """A TCP port that accepts connections and never answers (a server that stopped answering)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        listener.close()
