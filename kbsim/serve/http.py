"""The Streamable HTTP transport of ``kbsim serve --http``: the MCP SDK's, bound to localhost by default.

Remote agents and most hosted MCP clients attach over Streamable HTTP. The same
server :func:`kbsim.serve.server.build_server` makes for stdio is served here
through the SDK's own transport (``Server.streamable_http_app``, a Starlette app
run by uvicorn) at ``http://HOST:PORT/mcp``.

The server has no authentication: whoever reaches the port can read and edit the
knowledge base. So it binds a loopback address unless told otherwise
(``--allow-remote``), and it checks every request's ``Host`` and ``Origin`` headers
against the addresses it serves (the SDK's DNS-rebinding protection): a web page
in a browser on this machine cannot reach it through a name of its own
(``Host: evil.example:PORT``, 421) nor from its own origin
(``Origin: http://evil.example``, 403). Clients that send no ``Origin`` (every
non-browser client) are served; ``--allow-origin`` and ``--allow-host`` admit more.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

from kbsim.serve.server import ServeConfigError

log = logging.getLogger("kbsim.serve")

#: Where the MCP endpoint is served.
MCP_PATH = "/mcp"
#: The loopback names every local bind accepts in ``Host`` and ``Origin``.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: Seconds uvicorn waits for open streams when stopping, before closing them.
SHUTDOWN_GRACE_S = 3
#: The ``retry`` delay (milliseconds) an SSE stream tells a client to wait before it reconnects.
RETRY_MS = 1000


@dataclass(frozen=True)
class HttpAddress:
    """Where ``--http`` serves: a host (a name, an IPv4 or a bare IPv6 address) and a port (0: any free one)."""

    host: str
    port: int

    @property
    def url_host(self) -> str:
        """The host as a URL writes it (an IPv6 address in brackets)."""
        return f"[{self.host}]" if ":" in self.host else self.host

    def url(self, port: int | None = None) -> str:
        """The MCP endpoint's URL, at ``port`` (the bound one) when given."""
        return f"http://{self.url_host}:{self.port if port is None else port}{MCP_PATH}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


def parse_http_address(text: str, allow_remote: bool = False) -> HttpAddress:
    """``--http``'s ``[HOST:]PORT`` (``8000``, ``127.0.0.1:8000``, ``[::1]:8000``); HOST defaults to 127.0.0.1.

    Raises:
        ServeConfigError: not ``[HOST:]PORT`` with a port 0-65535, or a HOST that is
            not a loopback address without ``allow_remote`` (the server has no
            authentication).
    """
    spec = text.strip()
    host, port_text = "127.0.0.1", spec
    if spec.startswith("["):  # [v6]:port
        close = spec.find("]")
        if close < 0 or not spec[close + 1:].startswith(":") or not _is_ipv6(spec[1:close]):
            raise ServeConfigError(f"--http {text!r}: expected [IPV6]:PORT, e.g. [::1]:8000")
        host, port_text = spec[1:close], spec[close + 2:]
    elif ":" in spec:
        host, _, port_text = spec.rpartition(":")
        if _is_ipv6(host) or _is_ipv6(spec):
            raise ServeConfigError(f"--http {text!r}: write an IPv6 address in brackets, e.g. [::1]:8000")
        if "/" in host or ":" in host:
            host = ""  # a URL or some other text: the general message below
    if not host or not port_text.isdigit() or int(port_text) > 65_535:
        raise ServeConfigError(
            f"--http {text!r}: expected [HOST:]PORT with a port from 0 to 65535 (0: any free port), "
            "e.g. 8000 or 127.0.0.1:8000"
        )
    address = HttpAddress(host, int(port_text))
    if not allow_remote and not is_loopback(host):
        raise ServeConfigError(
            f"--http {text!r}: {host} is not a loopback address, and the server has no authentication "
            "(anyone who reaches it can read and edit the knowledge base); pass --allow-remote to bind "
            "it anyway, with --allow-host NAME for the name clients reach it by"
        )
    return address


def bind(address: HttpAddress) -> socket.socket:
    """A TCP socket bound to ``address`` (port 0: a free port the OS picks).

    Raises:
        ServeConfigError: the address cannot be bound (in use, not this machine's, ...).
    """
    try:
        found = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        # IPv4 first: "localhost" then binds 127.0.0.1, which every client reaches it by
        family, kind, proto, _, where = sorted(found, key=lambda info: info[0] != socket.AF_INET)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ServeConfigError(f"--http {address.url_host}:{address.port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
    except OSError as exc:
        sock.close()
        raise ServeConfigError(f"--http {address.url_host}:{address.port}: {exc.strerror or exc}") from None
    return sock


def _with_port(host: str, port: int) -> list[str]:
    """``host`` as a ``Host`` header may carry it: with the port, and bare at port 80."""
    return [f"{host}:{port}", host] if port == 80 else [f"{host}:{port}"]


def transport_security(address: HttpAddress, port: int, allow_hosts: Iterable[str] = (),
                       allow_origins: Iterable[str] = ()):
    """The SDK's DNS-rebinding protection for a server bound at ``address`` on ``port``.

    ``Host`` must name this server: a loopback name at ``port``, the bound host, or one
    of ``allow_hosts`` (``NAME`` or ``NAME:PORT``). ``Origin``, when a browser sends
    one, must be ``http://`` one of the loopback names at ``port``, or one of
    ``allow_origins`` (exact, e.g. ``https://agent.example``).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = [*LOOPBACK_HOSTS, address.url_host]
    allowed_hosts = [value for host in dict.fromkeys(hosts) for value in _with_port(host, port)]
    for host in allow_hosts:
        has_port = host.rpartition(":")[2].isdigit() and not host.endswith("]")
        allowed_hosts += [host] if has_port else _with_port(host, port)
    origins = [f"http://{host}:{port}" for host in dict.fromkeys(hosts) if is_loopback(host.strip("[]"))]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(allowed_hosts)),
        allowed_origins=list(dict.fromkeys([*origins, *allow_origins])),
    )


class InFlightIds:
    """The request ids in flight in each MCP session, as the SDK keys its own tables.

    The SDK (``mcp`` 2.x) files a request's reply channel under ``str(id)`` (its
    Streamable HTTP transport, which also keeps a session's GET stream under
    ``"_GET_stream"``) and its cancel scope under ``coerce_request_id(id)`` (the
    dispatcher, where ``7`` and ``"07"`` are one id), and a second request under a
    key already taken overwrites the first: one POST then gets the other's reply and
    the other none. So a request is refused while either of its keys is held in its
    session (MCP forbids reusing an id, so no client that follows it is refused).
    """

    #: How long a handled request's keys stay held for its reply to be stored (the reply is
    #: stored at once; a request answered with nothing, such as one cancelled as it ended,
    #: must not hold its id for ever).
    ANSWER_GRACE_S = 5.0

    def __init__(self) -> None:
        self._held: dict[str, Counter] = {}
        #: ``(session, str(id))`` of each handled request whose reply is not stored yet:
        #: its keys, and when they are let go if no reply is stored
        self._answering: dict[tuple[str, str], tuple[tuple[tuple[str, str | int], ...], float]] = {}

    @staticmethod
    def keys(request_id: str | int) -> tuple[tuple[str, str | int], ...]:
        """The SDK's keys for ``request_id``: its transport's, then its dispatcher's."""
        from mcp.shared.dispatcher import coerce_request_id

        return ("transport", str(request_id)), ("dispatcher", coerce_request_id(request_id))

    def held(self, session: str, keys: Iterable[tuple[str, str | int]]) -> bool:
        """Whether one of ``keys`` is held in ``session``."""
        if self._answering:
            now = time.monotonic()
            for answering, (_, until) in list(self._answering.items()):
                if until <= now:
                    self._let_go(answering)
        held = self._held.get(session)
        return held is not None and any(held[key] for key in keys)

    def _add(self, session: str, keys: tuple[tuple[str, str | int], ...]) -> None:
        self._held.setdefault(session, Counter()).update(keys)

    def _release(self, session: str, keys: tuple[tuple[str, str | int], ...]) -> None:
        held = self._held[session]
        held.subtract(keys)
        if not +held:
            del self._held[session]

    def _let_go(self, answering: tuple[str, str]) -> None:
        keys, _ = self._answering.pop(answering)
        self._release(answering[0], keys)

    async def while_handled(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """A server middleware (``Server.middleware``, outermost): hold a request's keys in its
        session while its handler runs, and after, until its reply is stored (:meth:`answered`).

        The POST that carried a request may end first, when its client drops it; the SDK then
        forgets the POST's reply channel, but its handler still runs, and its late reply would
        go to whichever POST of that session next takes the same id.
        """
        from kbsim.serve.events import CURRENT_SESSION

        of = CURRENT_SESSION.get()
        if ctx.request_id is None or of is None or of.id is None:
            return await call_next(ctx)
        session, keys = of.id, self.keys(ctx.request_id)
        self._add(session, keys)
        try:
            result = await call_next(ctx)
        except Exception:  # answered with an error reply: held until it is stored
            self._answering[(session, str(ctx.request_id))] = (keys, time.monotonic() + self.ANSWER_GRACE_S)
            raise
        except BaseException:  # cancelled: never answered (MCP), so let go now
            self._release(session, keys)
            raise
        self._answering[(session, str(ctx.request_id))] = (keys, time.monotonic() + self.ANSWER_GRACE_S)
        return result

    def answered(self, session: str | None, request_id: str | int) -> None:
        """The reply to ``request_id`` in ``session`` was stored: its keys are let go.

        Called by the event store (:class:`kbsim.serve.events.RecentEvents`), which the SDK
        calls just before it looks up the reply's channel, with no other task run between."""
        if session is not None and (session, str(request_id)) in self._answering:
            self._let_go((session, str(request_id)))

    @contextmanager
    def holding(self, session: str, keys: tuple[tuple[str, str | int], ...]) -> Iterator[None]:
        """Hold ``keys`` in ``session`` for the ``with`` block (a key may be held more than once)."""
        self._add(session, keys)
        try:
            yield
        finally:
            self._release(session, keys)


def _request_id(body: bytes) -> str | int | None:
    """The id of the JSON-RPC request ``body`` (one the SDK reads), None for any other message."""
    from mcp import types

    message = types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    return message.id if isinstance(message, types.JSONRPCRequest) else None


def _naming_session(of, send):
    """``send``, noting in ``of`` (a :class:`kbsim.serve.events.SessionOf`) the session the SDK
    names in its answer's headers."""
    from mcp.server.streamable_http import MCP_SESSION_ID_HEADER

    header = MCP_SESSION_ID_HEADER.encode("latin-1")

    async def naming(message) -> None:
        if message["type"] == "http.response.start" and of.id is None:
            for name, value in message.get("headers", ()):
                if name.lower() == header:
                    of.id = value.decode("latin-1")
        await send(message)

    return naming


def _in_flight_error(request_id: str | int):
    from mcp import types

    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(
        code=types.INVALID_REQUEST,
        message=f"Invalid Request: id {request_id!r} is already in flight in this session (or one the server "
                "cannot tell apart from it, such as 7 and \"7\"); MCP forbids reusing a request id, so wait "
                "for its answer or use a new id",
    ))


class AnsweredBodies:
    """ASGI middleware before the SDK's endpoint: a POST body the SDK would take for a
    notification and never answer (an ``id`` that is ``null``, an object, a list, a boolean,
    a fraction, NaN) is answered here, 400 with the JSON-RPC error the stdio transport gives
    the same line (:func:`kbsim.serve.stdio.line_error`), so HTTP clients get one too.

    A request whose id is already in flight in its session (:class:`InFlightIds`) is
    answered here too, 400 with -32600: the SDK would give one of the two the other's reply.

    The ``Host``, ``Origin`` and ``Content-Type`` checks come first, as in the SDK: a
    request they refuse is refused as before, never answered from its body. A body over
    ``limit`` bytes is passed on unread, for the SDK's 413.
    """

    def __init__(self, app, security, limit: int, on_session_closed: Callable[[str], object] | None = None,
                 in_flight: InFlightIds | None = None) -> None:
        from mcp.server.transport_security import TransportSecurityMiddleware

        self.app = app
        self.security = TransportSecurityMiddleware(security)
        self.limit = limit
        self.in_flight = InFlightIds() if in_flight is None else in_flight
        self.on_session_closed = on_session_closed

    async def __call__(self, scope, receive, send) -> None:
        """Answer a POST body to the endpoint the SDK would leave unanswered; pass all else on;
        tell ``on_session_closed`` of a session its client deleted or the SDK no longer knows."""
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
        from starlette.requests import Request

        from kbsim.serve.events import CURRENT_SESSION, SessionOf

        session = Request(scope).headers.get(MCP_SESSION_ID_HEADER)
        # whose events the SDK stores while serving this request (kbsim.serve.events): an
        # initialize request's session is named in its answer, and the SDK's router for that
        # session, started while it is served, keeps this SessionOf
        of = SessionOf(session)
        if session is None:
            send = _naming_session(of, send)
        token = CURRENT_SESSION.set(of)
        try:
            await self._with_session(scope, receive, send, session)
        finally:
            CURRENT_SESSION.reset(token)

    async def _with_session(self, scope, receive, send, session: str | None) -> None:
        if session is None or self.on_session_closed is None:
            await self._answer(scope, receive, send, session)
            return
        status = 0

        async def noting_status(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._answer(scope, receive, noting_status, session)
        finally:
            # a DELETE the SDK accepted ended the session; a 404 says the SDK has forgotten it
            # (deleted, or expired while idle): either way it is closed
            if status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300):
                self.on_session_closed(session)

    async def _answer(self, scope, receive, send, session: str | None) -> None:
        from mcp.server.streamable_http import GET_STREAM_KEY
        from starlette.requests import Request

        if scope["method"] == "GET" and session is not None:
            # a session's GET stream holds the SDK's key "_GET_stream" while it is open
            with self.in_flight.holding(session, (("transport", GET_STREAM_KEY),)):
                await self.app(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        from starlette.responses import Response

        from kbsim.serve.stdio import line_error

        refused = await self.security.validate_request(Request(scope), is_post=True)
        if refused is not None:
            await refused(scope, receive, send)
            return
        messages, size, complete = [], 0, False
        while size <= self.limit:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False):
                complete = True
                break
        keys: tuple[tuple[str, str | int], ...] = ()
        if complete and size <= self.limit:
            body = b"".join(message.get("body", b"") for message in messages)
            try:
                error = line_error(body.strip())
                request_id = _request_id(body) if error is None and session is not None else None
            except Exception:  # noqa: BLE001 - the SDK answers what could not be checked here
                error = request_id = None
            if request_id is not None and session is not None:
                keys = self.in_flight.keys(request_id)
                if self.in_flight.held(session, keys):
                    error = _in_flight_error(request_id)
            if error is not None:
                answer = error.model_dump_json(by_alias=True, exclude_unset=True)
                await Response(answer, status_code=400, media_type="application/json")(scope, receive, send)
                return
        pending = list(messages)

        async def replay():
            return pending.pop(0) if pending else await receive()

        # no await between the check above and the hold: no other request comes in between
        with self.in_flight.holding(session, keys) if keys and session is not None else nullcontext():
            await self.app(scope, replay, send)


def run_http(server, address: HttpAddress, *, allow_hosts: Iterable[str] = (), allow_origins: Iterable[str] = (),
             on_listening: Callable[[str], None] | None = None, stop: threading.Event | None = None,
             on_session_closed: Callable[[str], object] | None = None) -> None:
    """Serve ``server`` (an SDK low-level ``Server``) over Streamable HTTP until SIGINT or SIGTERM,
    or until ``stop`` is set (then it returns, after the same graceful shutdown).

    ``on_listening`` is called with the endpoint's URL once the socket is bound (its
    address, and the port the OS chose for port 0), before the first request is taken.
    Streams can be resumed: every SSE event has an id (:class:`~kbsim.serve.events.RecentEvents`
    keeps the latest), and a client that lost a stream reconnects with ``Last-Event-ID``
    after the ``retry`` delay the stream states (:data:`RETRY_MS`). ``on_session_closed`` is
    called with the id of each session once it has closed.
    """
    import uvicorn

    sock = bind(address)
    bound = HttpAddress(*sock.getsockname()[:2])
    port = bound.port
    security = transport_security(address, port, [*allow_hosts, bound.url_host], allow_origins)
    from mcp.server.streamable_http_manager import DEFAULT_MAX_REQUEST_BODY_SIZE

    from kbsim.serve.events import RecentEvents

    # a request's id stays in flight from its POST until its reply is stored, however soon
    # the POST ends: the handler holds it (outermost middleware), the event store lets it go
    in_flight = InFlightIds()
    server.middleware.insert(0, in_flight.while_handled)
    app = AnsweredBodies(server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security,
                                                    host=address.host,
                                                    event_store=RecentEvents(on_reply=in_flight.answered),
                                                    retry_interval=RETRY_MS),
                         security, DEFAULT_MAX_REQUEST_BODY_SIZE, on_session_closed, in_flight)
    config = uvicorn.Config(
        app,
        log_config=None,  # kbsim's logging (stderr) as configured by the caller
        access_log=log.isEnabledFor(logging.DEBUG),
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    log.info("Streamable HTTP at %s; Host: %s; Origin: none, or %s", bound.url(),
             ", ".join(security.allowed_hosts), ", ".join(security.allowed_origins))
    # listen now, before the URL is announced: a client that connects at once waits in the
    # backlog for uvicorn to start accepting, instead of being refused
    sock.listen(config.backlog)
    if on_listening is not None:
        on_listening(bound.url())
    served = uvicorn.Server(config)
    if stop is not None:
        def stop_when_set() -> None:
            stop.wait()
            served.should_exit = True

        threading.Thread(target=stop_when_set, name="kbsim-http-stop", daemon=True).start()
    try:
        served.run(sockets=[sock])
    finally:
        sock.close()
    if stop is not None and stop.is_set():
        return  # stopped as asked (the live day stopped): the caller says why
    if served.should_exit:
        # Stopped by SIGINT or SIGTERM. uvicorn re-raises the signal once it has shut down,
        # which is a KeyboardInterrupt (exit 130) as a rule; under load the re-raise was seen
        # to land as the event loop's own cancellation of a task that then finished, and the
        # server exited 0. Say here what stopped it, whichever way the re-raise went.
        raise KeyboardInterrupt
