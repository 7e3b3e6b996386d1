"""NDJSON and compact POSTs to the sidecar, classified as delivered, permanently refused or retry.

No proxy environment variables are consulted (a loopback sidecar must never be reached through
``HTTP_PROXY``), and a status code is a value rather than an exception. :class:`Connection`
keeps one keep-alive connection for the sender thread, so a batch costs one request, not a TCP
handshake as well.
"""

import email.utils
import json
import math
import socket
import ssl
import time
from collections import namedtuple
from urllib.parse import urlsplit

from .encoding import COMPACT_MEDIA_TYPE

DELIVERED = "delivered"
REFUSED = "refused"    # the sidecar will never take this batch: do not send it again
RETRY = "retry"        # try the same batch again later

# Overload and restart answers (architecture: 429 or 503 + Retry-After; 502/504 from a proxy).
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})

NDJSON_MEDIA_TYPE = "application/x-ndjson"

# Bytes of response body read at most (the sidecar answers a small JSON summary).
_MAX_RESPONSE_BYTES = 65536

Outcome = namedtuple("Outcome", ["kind", "status", "retry_after", "accepted", "rejected", "error"])

Endpoint = namedtuple("Endpoint", ["scheme", "host", "port", "path", "display"])


def parse_endpoint(url):
    """Split the sidecar URL once; ``display`` is ``host:port`` (never credentials or path)."""
    parts = urlsplit(url)
    scheme = (parts.scheme or "http").lower()
    if scheme not in ("http", "https"):
        raise ValueError("HERMES_SIDECAR_URL must be http:// or https://")
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if scheme == "https" else 80)
    path = parts.path or "/"
    if parts.query:
        path = path + "?" + parts.query
    return Endpoint(scheme, host, port, path, "%s:%d" % (host, port))


def parse_retry_after(value, now=None):
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), or ``None``."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        seconds = None
    if seconds is not None:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def _summary_counts(body):
    """``accepted``/``rejected`` from a 202 body; ``None`` when absent or not JSON."""
    try:
        summary = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None, None
    if not isinstance(summary, dict):
        return None, None
    accepted = summary.get("accepted")
    rejected = summary.get("rejected")
    accepted = accepted if type(accepted) is int else None
    rejected = rejected if type(rejected) is int else None
    return accepted, rejected


def classify(status, retry_after_header, body):
    """Map an HTTP answer onto what the sender should do with the batch."""
    if 200 <= status < 300:
        accepted, rejected = _summary_counts(body)
        return Outcome(DELIVERED, status, None, accepted, rejected, None)
    if status in RETRYABLE_STATUSES:
        return Outcome(RETRY, status, parse_retry_after(retry_after_header), None, None, None)
    # 400/401/403/413/415 and anything unexpected: resending the same bytes cannot help.
    return Outcome(REFUSED, status, None, None, None, None)


# What a request on a keep-alive connection the server already closed fails with (never a
# timeout: a hung sidecar must cost one timeout, not two).
_STALE_CONNECTION_ERRORS = frozenset({
    "RemoteDisconnected", "BrokenPipeError", "ConnectionResetError", "ConnectionAbortedError",
})
# Bytes of response head (status line and headers) read at most.
_MAX_HEAD_BYTES = 16384


class RemoteDisconnected(ConnectionError):
    """The server closed the connection before it answered."""


class BadResponse(ValueError):
    """The answer is not HTTP/1.x as the plugin understands it."""


class Connection(object):
    """One reusable HTTP/1.1 connection to the sidecar (sender thread only).

    A deliberately small client: one ``sendmsg`` of head and body, a response parsed from the
    status line, ``Content-Length`` / ``Transfer-Encoding: chunked``, ``Connection`` and
    ``Retry-After``. ``http.client`` costs ~0.3 ms of CPU per request in header parsing alone,
    paid on the thread that shares the GIL with Hermes. A request on a connection the server
    closed while idle fails before anything was processed; it is retried once on a fresh
    connection. Any other failure closes the connection and is a ``RETRY`` outcome.
    """

    def __init__(self, endpoint, token):
        self.endpoint = endpoint
        self._heads = {media_type: self._head(endpoint, token, media_type)
                       for media_type in (NDJSON_MEDIA_TYPE, COMPACT_MEDIA_TYPE)}
        # Whether the last answer advertised the compact body (``Accept-Post`` naming it).
        self.accepts_compact = False
        self._sock = None
        self._ssl_context = None

    @staticmethod
    def _head(endpoint, token, media_type):
        head = [
            "POST %s HTTP/1.1" % endpoint.path,
            "Host: %s:%d" % (endpoint.host, endpoint.port),
            "Content-Type: " + media_type,
            "User-Agent: hermes-prometheus-bridge",
        ]
        if token:
            head.append("Authorization: Bearer " + token)
        return ("\r\n".join(head).replace("%", "%%")
                + "\r\nContent-Length: %d\r\n\r\n").encode("latin-1")

    def post(self, body, timeout, media_type=NDJSON_MEDIA_TYPE):
        reused = self._sock is not None
        outcome = self._attempt(body, timeout, media_type)
        if reused and outcome.error in _STALE_CONNECTION_ERRORS:
            # the idle connection had been closed
            outcome = self._attempt(body, timeout, media_type)
        return outcome

    def open(self, timeout):
        """Connect now unless connected; ``None`` when connected, else the ``RETRY`` outcome a
        post would have had (so a sidecar that is down costs no body)."""
        if self._sock is not None:
            return None
        try:
            self._sock = self._connect(timeout)
            return None
        except Exception as exc:  # refused, unreachable, timed out, TLS
            return Outcome(RETRY, None, None, None, None, type(exc).__name__)

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def _connect(self, timeout):
        sock = socket.create_connection((self.endpoint.host, self.endpoint.port), timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.endpoint.scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = ssl.create_default_context()
            sock = self._ssl_context.wrap_socket(sock, server_hostname=self.endpoint.host)
        return sock

    def _attempt(self, body, timeout, media_type):
        try:
            if self._sock is None:
                self._sock = self._connect(timeout)
            sock = self._sock
            sock.settimeout(timeout)
            head = self._heads[media_type] % len(body)
            if isinstance(sock, ssl.SSLSocket):
                sock.sendall(head + body)
            else:
                _send_all(sock, head, body)
            status, headers, answer = _read_response(sock)
            if headers.get("connection", "").lower() == "close":
                self.close()
            self.accepts_compact = COMPACT_MEDIA_TYPE in headers.get("accept-post", "").lower()
            return classify(status, headers.get("retry-after"), answer)
        except Exception as exc:  # refused, reset, timed out, TLS, malformed answer: transient
            self.close()
            return Outcome(RETRY, None, None, None, None, type(exc).__name__)


def _send_all(sock, head, body):
    """Head and body in one ``sendmsg`` (no copy of the body), then whatever is left."""
    sent = sock.sendmsg([head, body])
    if sent < len(head):
        sock.sendall(head[sent:])
        sock.sendall(body)
    elif sent < len(head) + len(body):
        sock.sendall(memoryview(body)[sent - len(head):])


def _read_response(sock):
    """``(status, {lower-case header: value}, body bytes up to _MAX_RESPONSE_BYTES)``."""
    buffer = b""
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            break
        if len(buffer) > _MAX_HEAD_BYTES:
            raise BadResponse("response head too long")
        chunk = sock.recv(65536)
        if not chunk:
            raise RemoteDisconnected("closed before the answer")
        buffer += chunk
    lines = buffer[:end].decode("latin-1").split("\r\n")
    rest = buffer[end + 4:]
    version, _, remainder = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise BadResponse("not HTTP/1.x")
    status = int(remainder[:3])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = _read_chunked(sock, rest)
    elif "content-length" in headers:
        length = int(headers["content-length"])
        body = _read_exactly(sock, rest, length)
    elif status in (204, 304) or 100 <= status < 200:
        body = b""
    else:
        headers["connection"] = "close"  # length unknown: the body ends at close
        body = _read_exactly(sock, rest, _MAX_RESPONSE_BYTES, until_close=True)
    return status, headers, body[:_MAX_RESPONSE_BYTES]


def _read_exactly(sock, buffer, length, until_close=False):
    while len(buffer) < length:
        chunk = sock.recv(min(65536, length - len(buffer)))
        if not chunk:
            if until_close:
                return buffer
            raise RemoteDisconnected("closed inside the answer")
        buffer += chunk
    return buffer


def _read_chunked(sock, buffer):
    body = b""
    while True:
        while b"\r\n" not in buffer:
            chunk = sock.recv(65536)
            if not chunk:
                raise RemoteDisconnected("closed inside a chunk")
            buffer += chunk
        size_line, _, buffer = buffer.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        buffer = _read_exactly(sock, buffer, size + 2)
        if size == 0:
            return body
        if len(body) < _MAX_RESPONSE_BYTES:
            body += buffer[:size]
        buffer = buffer[size + 2:]
