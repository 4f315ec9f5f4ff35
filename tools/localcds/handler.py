"""HTTP plumbing: the threaded server, the route table, and the handler base every endpoint builds on
(dispatch, bodies, JSON and OGC error answers, injected-fault answers, the key check)."""

from __future__ import annotations

import http
import json
import logging
import re
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

from localcds.faults import Fault
from localcds.jobs import Job
from localcds.protocol import ERA5_LICENCE, ApiError
from localcds.records import DownloadRecord

# The server's logger, named as before the emulator was split into modules.
log = logging.getLogger("localcds.server")


class Backend(Protocol):
    """What the handlers need of the server object (:class:`~localcds.server.LocalCDS`)."""

    host: str
    key: str
    messages: list[dict[str, Any]]
    accepted_licences: set[tuple[str, int]]
    cost_limits: dict[str, float]
    jobs: dict[str, Job]
    _lock: threading.RLock

    @property
    def port(self) -> int: ...

    def create_job(self, process_id: str, inputs: dict[str, Any]) -> Job: ...

    def start_job(self, job: Job) -> None: ...

    def job_or_404(self, job_id: str) -> Job: ...

    def dismiss(self, job: Job) -> None: ...

    def expire(self, job_id: str) -> None: ...

    def asset_file(self, url_path: str) -> tuple[Path, str] | None: ...

    def asset_job(self, url_path: str) -> Job | None: ...

    def take_fault(self, where: str, inputs: dict[str, Any] | None) -> Fault | None: ...

    def take_truncation(self) -> bool: ...

    def record_call(self, method: str, path: str, status: int) -> None: ...

    def record_download(self, record: DownloadRecord) -> None: ...


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], cds: Backend
    ) -> None:
        self.cds = cds
        super().__init__(address, handler)


class _Answered(Exception):
    """An injected fault has answered the call (or dropped it); the route stops here."""


Route = Callable[[Any, re.Match[str]], None]
_R = TypeVar("_R", bound=Route)
_ROUTE = "_localcds_route"  # the attribute :func:`route` marks an endpoint with


def route(method: str, pattern: str) -> Callable[[_R], _R]:
    """Mark a handler method as the endpoint for ``method`` on the paths ``pattern`` matches whole."""

    def register(fn: _R) -> _R:
        setattr(fn, _ROUTE, (method, re.compile(f"^{pattern}$")))
        return fn

    return register


ID = r"(?P<id>[A-Za-z0-9._-]+)"


def iter_routes(handler: type[BaseHandler]) -> Iterator[str]:
    """The routes ``handler`` serves, for the CLI banner."""
    for method, pattern, _ in handler.routes:
        yield f"{method:6} {pattern.pattern.strip('^$')}"


class BaseHandler(BaseHTTPRequestHandler):
    """The plumbing of a request handler; endpoints are methods of subclasses, marked with :func:`route`.

    A class's route table holds the endpoints of its classes in method resolution order, each class's
    in the order they are written; a request goes to the first whose pattern and method match.
    """

    routes: ClassVar[tuple[tuple[str, re.Pattern[str], Route], ...]] = ()

    # Keep-alive, as requests' session expects; every response therefore carries Content-Length.
    protocol_version = "HTTP/1.1"
    # Headers and body go out as separate writes; without TCP_NODELAY each response waits ~40 ms
    # on the client's delayed ACK.
    disable_nagle_algorithm = True
    _body_read = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        table: list[tuple[str, re.Pattern[str], Route]] = []
        for klass in cls.__mro__:
            if not issubclass(klass, BaseHandler):
                continue
            for fn in vars(klass).values():
                spec = getattr(fn, _ROUTE, None)
                if spec is not None:
                    method, pattern = spec
                    table.append((method, pattern, fn))
        cls.routes = tuple(table)

    def version_string(self) -> str:
        return "uvicorn"

    @property
    def cds(self) -> Backend:
        server = self.server
        assert isinstance(server, HTTPServer)
        return server.cds

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    # -- plumbing ---------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    @property
    def split(self) -> tuple[str, dict[str, list[str]]]:
        parts = urlsplit(self.path)
        return parts.path, parse_qs(parts.query)

    @property
    def origin(self) -> str:
        host = self.headers.get("Host") or f"{self.cds.host}:{self.cds.port}"
        return f"http://{host}"

    @property
    def full_url(self) -> str:
        return f"{self.origin}{self.path}"

    def _dispatch(self, method: str) -> None:
        # One handler serves every request of a kept-alive connection: reset per-request state.
        self._body_read = False
        path, _ = self.split
        allowed = False
        try:
            for route_method, pattern, fn in self.routes:
                match = pattern.match(path)
                if match is None:
                    continue
                if route_method != method and not (route_method == "GET" and method == "HEAD"):
                    allowed = True
                    continue
                fn(self, match)
                return
            self._drain()
            if allowed:
                self._json(405, {"detail": "Method Not Allowed"})
            else:
                self._json(404, {"detail": "Not Found"})
        except ApiError as exc:
            self._drain()
            self._error(exc.status, exc.body)
        except _Answered:
            pass
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception:
            log.exception("local CDS: internal error on %s %s", method, self.path)
            self._drain()
            self._error(500, {"type": "internal server error", "title": "internal server error"})

    def _drain(self) -> None:
        """Read an unread request body, so a kept-alive connection stays in step."""
        length = int(self.headers.get("Content-Length") or 0)
        if length and not self._body_read:
            self.rfile.read(length)
            self._body_read = True

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        self._body_read = True
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ApiError(422, {"type": "invalid request", "title": "invalid request",
                                 "detail": "the request body is not valid JSON"}) from None

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.cds.record_call(self.command, self.split[0], status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _error(self, status: int, body: dict[str, Any]) -> None:
        # The OGC exception body of the CADS API: type, title, status, detail, instance, trace_id.
        payload = {"type": body.get("type"), "title": body.get("title"), "status": status}
        for key in ("detail", "traceback"):
            if body.get(key) is not None:
                payload[key] = body[key]
        payload["instance"] = self.full_url
        payload["trace_id"] = str(uuid.uuid4())
        self._json(status, payload)

    # -- injected faults --------------------------------------------------------------------------

    def _drop(self) -> None:
        """Close the connection without a word, as a crashed backend or a cut network does."""
        self._drain()
        self.cds.record_call(self.command, self.split[0], 0)
        self.close_connection = True
        raise _Answered

    def _fault(self, where: str, inputs: dict[str, Any] | None) -> Fault | None:
        """Apply the armed fault for this call: answer or drop it here, or hand it back to the route."""
        fault = self.cds.take_fault(where, inputs)
        if fault is None:
            return None
        if fault.kind == "drop":
            self._drop()
        if fault.kind == "status":
            self._drain()
            self._fault_status(fault)
            raise _Answered
        return fault

    def _fault_status(self, fault: Fault) -> None:
        status = fault.status
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            # RFC 9110 says whole seconds; fractions keep tests short, and the client reads both.
            value = fault.retry_after
            headers["Retry-After"] = str(int(value)) if float(value).is_integer() else f"{value:g}"
        try:
            phrase = http.HTTPStatus(status).phrase
        except ValueError:
            phrase = "Error"
        if status in (502, 503, 504):
            # These come from the gateway in front of the API: HTML, not the API's JSON.
            page = (f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n"
                    f"<center><h1>{status} {phrase}</h1></center>\r\n<hr><center>nginx</center>\r\n"
                    "</body>\r\n</html>\r\n")
            self._send(status, page.encode(), "text/html", headers)
            return
        bodies: dict[int, dict[str, Any]] = {
            401: {"type": "permission denied", "title": "Authentication failed", "detail": "operation not allowed"},
            403: {"type": "permission denied", "title": "required licences not accepted",
                  "detail": "please accept the following licences to proceed: "
                            f"{[{'id': ERA5_LICENCE[0], 'revision': ERA5_LICENCE[1]}]}"},
            429: {"type": "too many requests", "title": "too many requests",
                  "detail": "rate limit exceeded; please retry later"},
            500: {"type": "internal server error", "title": "internal server error"},
        }
        body = dict(bodies.get(status, {"type": "error", "title": phrase.lower()}))
        if fault.message:
            body["detail"] = fault.message
        payload = {"type": body.get("type"), "title": body.get("title"), "status": status,
                   **({"detail": body["detail"]} if "detail" in body else {}),
                   "instance": self.full_url, "trace_id": str(uuid.uuid4())}
        self._json(status, payload, headers)

    def _authenticate(self) -> None:
        token = self.headers.get("PRIVATE-TOKEN")
        if not token:
            raise ApiError(401, {"type": "permission denied", "title": "permission denied",
                                 "detail": "authentication required"})
        if token != self.cds.key:
            # Word for word what the CDS answers for a key it does not know.
            raise ApiError(401, {"type": "permission denied", "title": "Authentication failed",
                                 "detail": "operation not allowed"})
