"""``kbsim serve`` always answers, and never serves a half-built knowledge base.

The servers here are real ``python -m kbsim serve`` processes. Most are
spoken to in raw JSON lines, as any client (conforming or not) can write
them, so that a line the MCP SDK cannot even parse is tested too: every
request with an id gets a JSON-RPC error or a tool result. Knowledge bases
are small and every wait polls for a condition with a generous time limit;
nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from kbsim import SQLiteStore, parse_version
from kbsim.store import ERROR_CODES

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
KB = "kb-1"
PATIENCE_S = 60.0  # only ever reached when something is wrong


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "kbsim", "serve", *args]


def wait_for(condition: Callable[[], Any], what: str, process: subprocess.Popen | None = None):
    """Poll ``condition`` until it is truthy (returned), failing after PATIENCE_S."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            value = condition()  # the last word, written just before it exited
            if value:
                return value
            raise AssertionError(f"server exited ({process.returncode}) before {what}")
        time.sleep(0.005)
    raise AssertionError(f"gave up waiting for {what}")


def served_articles(stderr: Path) -> int | None:
    """The number of articles the server said it serves, once it has said so."""
    for line in stderr.read_text(errors="replace").splitlines():
        if f"serving {KB} (" in line:
            return int(line.split(f"serving {KB} (", 1)[1].split()[0])
    return None


class RawServer:
    """One ``kbsim serve`` process spoken to in raw JSON lines."""

    def __init__(self, stderr: Path, *args: str) -> None:
        self.stderr_path = stderr
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(serve_command(*args), cwd=REPO, env=ENV,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr)
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next_id = 100

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line)

    def send_line(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            try:
                return json.loads(self._lines.get(timeout=0.05))
            except queue.Empty:
                if self.proc.poll() is not None and self._lines.empty():
                    raise AssertionError(
                        f"server exited ({self.proc.returncode}) without replying: "
                        + self.stderr_path.read_text(errors="replace")[-2000:]
                    ) from None
        raise AssertionError("no reply: the client would wait forever")

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": self._next_id, "method": method,
                                   "params": params}).encode())
        reply = self.reply()
        assert reply["id"] == self._next_id, reply
        return reply

    def initialize(self) -> RawServer:
        assert self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "raw", "version": "0"}})["result"]
        self.send_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return self

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        result = self.request("tools/call", {"name": name, "arguments": arguments})["result"]
        payload = result["structuredContent"]
        assert json.loads(result["content"][0]["text"]) == payload
        if result["isError"]:
            assert payload["code"] in ERROR_CODES, payload
        return payload, result["isError"]

    def ok(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        payload, is_error = self.call(name, arguments)
        assert not is_error, payload
        return payload

    def close(self) -> int:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=PATIENCE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self._stderr.close()
        return self.proc.returncode


@contextmanager
def raw_server(stderr: Path, *args: str) -> Iterator[RawServer]:
    server = RawServer(stderr, *args)
    try:
        yield server.initialize()
    finally:
        server.close()


def small_config(tmp_path: Path, articles: int = 12, name: str = "day.yaml") -> Path:
    config = tmp_path / name
    config.write_text(f"corpus:\n  articles: {articles}\n")
    return config


def read(server: RawServer, article_id: str) -> dict[str, Any]:
    return server.ok("read_knowledge_article", {"knowledge_base_id": KB, "article_id": article_id})


def edit(server: RawServer, article_id: str, key: str, version: str | None = None):
    version = version or read(server, article_id)["updated_at"]
    return server.call("edit_knowledge_article", {
        "knowledge_base_id": KB, "article_id": article_id, "content": f"edited {key}",
        "expected_version": version, "idempotency_key": key})


def events(server: RawServer) -> list[dict[str, Any]]:
    found, after = [], 0
    while True:
        page = server.ok("poll_resource_events", {"resource_type": "knowledge_base",
                                                  "resource_id": KB, "after_sequence": after})
        found += page["events"]
        after = page["next_sequence"]
        if not page["has_more"]:
            return found


# -- every line gets an answer ------------------------------------------------------------------


def test_every_request_gets_an_answer_whatever_the_line(tmp_path):
    # A knowledge base whose stored text is not valid Unicode (possible through the Python
    # API): the answer must still go out.
    db = tmp_path / "kb.db"
    with SQLiteStore(db) as store:
        store.create_knowledge_base(KB)
        store.publish_article(KB, title="lone \ud800 surrogate", content="body \udfff text", at=0.0)
        store.publish_article(KB, title="plain words", content="plain body", at=0.0)
    search = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":' \
             '"search_knowledge_base","arguments":{"knowledge_base_id":"kb-1","query":%s}}}'
    with raw_server(tmp_path / "stderr.log", "--db", str(db)) as server:
        # a string cut in the middle of an emoji, as JavaScript clients can send it
        server.send_line((search % (2, '"ab\\ud800cd"')).encode())
        reply = server.reply()
        assert reply["id"] == 2 and reply["error"]["code"] == -32602, reply
        assert "params.arguments.query" in reply["error"]["message"]
        assert "surrogate" in reply["error"]["message"]
        # ... also where it would have been written: refused, nothing written
        server.send_line(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "edit_knowledge_article", "arguments": {
                "knowledge_base_id": KB, "article_id": "art-000002", "content": "x\ud83d",
                "expected_version": "2026-01-05T09:00:00Z", "idempotency_key": "k"}}}).encode())
        reply = server.reply()
        assert reply["id"] == 3 and reply["error"]["code"] == -32602, reply
        assert "params.arguments.content" in reply["error"]["message"]
        # bytes that are not UTF-8: refused (not silently replaced), with the id
        server.send_line((search % (4, '"ab\xff\xfe"')).encode("latin-1"))
        reply = server.reply()
        assert reply["id"] == 4 and reply["error"]["code"] == -32700, reply
        assert "UTF-8" in reply["error"]["message"]
        # NaN is not JSON, but the SDK reads it: then the tool's schema refuses it
        server.send_line((search % (5, '"ab", "limit": NaN')).encode())
        reply = server.reply()
        assert reply["id"] == 5 and reply["result"]["isError"], reply
        assert reply["result"]["structuredContent"]["code"] == "invalid_argument"
        assert "limit" in reply["result"]["structuredContent"]["message"]
        # JSON, but not a JSON-RPC message
        server.send_line(b'{"jsonrpc":"2.0","id":6,"method":6}')
        reply = server.reply()
        assert reply["id"] == 6 and reply["error"]["code"] == -32600, reply
        server.send_line(b"[1, 2]")
        reply = server.reply()
        assert reply["id"] is None and reply["error"]["code"] == -32600, reply
        # not JSON at all: no id can be read, so the answer has id null
        server.send_line(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{')
        reply = server.reply()
        assert reply["id"] is None and reply["error"]["code"] == -32700, reply
        server.send_line(b"")  # a blank line is no request: no answer (the next is 101's)

        # Text stored with lone surrogates goes out as U+FFFD, and the server goes on.
        hit = server.ok("search_knowledge_base", {"knowledge_base_id": KB, "query": "lone"})
        assert hit["results"][0]["title"] == "lone \ufffd surrogate"
        assert read(server, "art-000001")["content"] == "body \ufffd text"
        assert [e["type"] for e in events(server)] == ["article.published"] * 2  # nothing written
    assert server.proc.returncode == 0


# -- a locked database ------------------------------------------------------------------------


def test_a_locked_database_is_a_retryable_busy_tool_error(tmp_path):
    db = tmp_path / "kb.db"
    args = ("--db", str(db), "--config", str(small_config(tmp_path)), "--busy-timeout", "0.3")
    with raw_server(tmp_path / "stderr.log", *args) as server:
        version = read(server, "art-000003")["updated_at"]
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            payload, is_error = edit(server, "art-000003", "locked", version)
            assert is_error and payload["code"] == "busy", payload
            assert "retry" in payload["message"] and "0.3" in payload["message"]
            assert read(server, "art-000003")["updated_at"] == version  # reads go on
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        # The very same call, retried, applies.
        payload, is_error = edit(server, "art-000003", "locked", version)
        assert not is_error and payload["replayed"] is False
    assert (served := served_articles(tmp_path / "stderr.log")) == 12, served


def test_busy_timeout_must_be_a_positive_number():
    from kbsim.serve.server import ServeConfigError, check_busy_timeout

    for value in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ServeConfigError, match="--busy-timeout"):
            check_busy_timeout(value)
    run = subprocess.run(serve_command("--busy-timeout", "0"), cwd=REPO, env=ENV,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "--busy-timeout" in run.stderr and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


# -- the clock ---------------------------------------------------------------------------------


@pytest.mark.parametrize("speed", ["1e12", "inf"])
def test_a_speed_beyond_the_range_is_refused(speed):
    run = subprocess.run(serve_command("--speed", speed), cwd=REPO, env=ENV,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert "--speed" in run.stderr and "86400" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_the_served_clock_is_validated_and_bounded():
    from kbsim.serve.server import MAX_SPEED, DayClock
    from kbsim.store.timefmt import MAX_VERSION_US

    for speed in (0.0, -1.0, float("nan"), float("inf"), 1e12, MAX_SPEED * 2):
        with pytest.raises(ValueError, match="speed"):
            DayClock(speed)
    for start_s in (float("inf"), float("nan"), MAX_VERSION_US / 1e6):
        with pytest.raises(ValueError, match="start_s"):
            DayClock(1.0, start_s=start_s)
    # A clock that has run to the end of the calendar stays there, a day short of it,
    # so that versions still have room to step by a microsecond.
    clock = DayClock(MAX_SPEED, start_s=MAX_VERSION_US / 1e6 - 86_400.5)
    assert clock() <= MAX_VERSION_US / 1e6 - 86_400
    assert DayClock(MAX_SPEED)() >= 0.0


# -- two servers on one file --------------------------------------------------------------------


def test_two_servers_on_one_file_keep_the_log_in_time_order(tmp_path):
    """Server A's clock runs far ahead of server B's; the log's updated_at must still never
    go back, and each article's versions must strictly increase."""
    db = tmp_path / "shared.db"
    config = str(small_config(tmp_path))
    with raw_server(tmp_path / "a.log", "--db", db.as_posix(), "--config", config,
                    "--speed", "86400") as ahead:
        with raw_server(tmp_path / "b.log", "--db", db.as_posix(), "--config", config,
                        "--speed", "0.001") as behind:
            for n, (server, article_id) in enumerate(
                [(ahead, "art-000001"), (behind, "art-000002"), (behind, "art-000002"),
                 (ahead, "art-000003"), (behind, "art-000001"), (ahead, "art-000002")]
            ):
                payload, is_error = edit(server, article_id, f"edit-{n}")
                assert not is_error, payload
            log = events(behind)
    assert [e["sequence"] for e in log] == list(range(1, 12 + 6 + 1))
    versions = [parse_version(e["updated_at"]) for e in log]
    assert versions == sorted(versions), [e["updated_at"] for e in log[12:]]
    for article_id in ("art-000001", "art-000002", "art-000003"):
        mine = [parse_version(e["updated_at"]) for e in log if e["article_id"] == article_id]
        assert all(a < b for a, b in zip(mine[:-1], mine[1:], strict=True)), article_id


# -- the config ------------------------------------------------------------------------------


def test_serve_reads_dotted_keys_like_run(tmp_path):
    config = tmp_path / "dotted.yaml"
    config.write_text("corpus.articles: 7\nsaves.count: 50\nsaves.popularity: uniform\n")
    with raw_server(tmp_path / "stderr.log", "--config", str(config)) as server:
        assert read(server, "art-000007")["article_id"] == "art-000007"
    assert served_articles(tmp_path / "stderr.log") == 7


@pytest.mark.parametrize("kind", ["not_utf8", "typo"])
def test_a_bad_config_is_one_line_naming_the_file(tmp_path, kind):
    config = tmp_path / f"{kind}.yaml"
    if kind == "not_utf8":
        config.write_bytes("zipf_s: 1.0\n# caf\u00e9\n".encode("latin-1"))
        words = "UTF-8"
    else:
        config.write_text("saves.cont: 50\n")
        words = "saves.cont"
    run = subprocess.run(serve_command("--config", str(config)), cwd=REPO, env=ENV,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert str(config) in run.stderr and words in run.stderr


# -- a half-built knowledge base is never served -------------------------------------------------


def _filling(db: Path, stderr: Path) -> bool:
    """The server is filling the knowledge base: it said so (or the knowledge base is
    already there to be seen), and it holds the file's write lock."""
    said = stderr.exists() and "filling kb-1" in stderr.read_text(errors="replace")
    if not said:
        try:
            reader = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0)
            try:
                seen = reader.execute("SELECT count(*) FROM knowledge_bases").fetchone()[0]
            finally:
                reader.close()
        except sqlite3.Error:
            return False
        if not seen:
            return False
    writer = sqlite3.connect(db, timeout=0, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        return "locked" in str(exc)
    finally:
        writer.close()


def _articles_in(db: Path) -> int | None:
    """How many articles the file's kb-1 holds (None: there is no kb-1)."""
    with SQLiteStore(db) as store:
        if not store.has_knowledge_base(KB):
            return None
        return len(store.published_article_ids(KB))


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_a_first_fill_cut_short_is_never_served(tmp_path, stop):
    db = tmp_path / "first.db"
    config = str(small_config(tmp_path, articles=1000))
    with (tmp_path / "first.log").open("wb") as err:
        server = subprocess.Popen(serve_command("--db", str(db), "--config", config), cwd=REPO,
                                  env=ENV, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                  stderr=err)
        try:
            wait_for(lambda: _filling(db, tmp_path / "first.log"), "the fill", server)
            server.send_signal(stop)
            server.wait(timeout=PATIENCE_S)
        finally:
            server.kill()
            server.wait()
            server.stdin.close()
    assert _articles_in(db) in (None, 1000)
    with raw_server(tmp_path / "second.log", "--db", str(db), "--config", config) as again:
        assert read(again, "art-001000")["article_id"] == "art-001000"
    assert served_articles(tmp_path / "second.log") == 1000


def test_two_servers_starting_together_both_serve_the_whole_knowledge_base(tmp_path):
    db = tmp_path / "together.db"
    config = str(small_config(tmp_path, articles=800))
    servers = [RawServer(tmp_path / f"{name}.log", "--db", str(db), "--config", config)
               for name in ("a", "b")]
    try:
        for server in servers:
            assert wait_for(lambda s=server: served_articles(s.stderr_path), "serving",
                            server.proc) == 800
            server.initialize()
            assert read(server, "art-000800")["article_id"] == "art-000800"
    finally:
        for server in servers:
            server.close()


def test_a_damaged_database_is_refused_in_one_line(tmp_path):
    db = tmp_path / "damaged.db"
    with SQLiteStore(db) as store:
        store.create_knowledge_base(KB)
        for n in range(300):
            store.publish_article(KB, title=f"title {n}", content="body words " * 10, at=0.0)
    raw = sqlite3.connect(db)
    (root,) = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'articles'").fetchone()
    page_size = raw.execute("PRAGMA page_size").fetchone()[0]
    raw.close()
    with db.open("r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(b"\xa5" * page_size)
    run = subprocess.run(serve_command("--db", str(db)), cwd=REPO, env=ENV,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and run.stdout == "", run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert str(db) in run.stderr and "damaged" in run.stderr
