"""NDJSON POSTs to the sidecar, classified as delivered, permanently refused or retry.

``http.client`` is used directly: no proxy environment variables are consulted (a loopback
sidecar must never be reached through ``HTTP_PROXY``), and a status code is a value rather than
an exception. :class:`Connection` keeps one keep-alive connection for the sender thread, so a
batch costs one request, not a TCP handshake as well.
"""

import email.utils
import http.client
import json
import math
import time
from collections import namedtuple
from urllib.parse import urlsplit

DELIVERED = "delivered"
REFUSED = "refused"    # the sidecar will never take this batch: do not send it again
RETRY = "retry"        # try the same batch again later

# Overload and restart answers (architecture: 429 or 503 + Retry-After; 502/504 from a proxy).
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})

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


def post_ndjson(endpoint, body, token, timeout):
    """POST ``body`` (NDJSON bytes); connection errors and timeouts are ``RETRY`` outcomes."""
    connection_class = (
        http.client.HTTPSConnection if endpoint.scheme == "https" else http.client.HTTPConnection
    )
    headers = {
        "Content-Type": "application/x-ndjson",
        "Content-Length": str(len(body)),
        "Connection": "close",
        "User-Agent": "hermes-prometheus-bridge",
    }
    if token:
        headers["Authorization"] = "Bearer " + token
    connection = connection_class(endpoint.host, endpoint.port, timeout=timeout)
    try:
        connection.request("POST", endpoint.path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(_MAX_RESPONSE_BYTES)
        return classify(response.status, response.getheader("Retry-After"), answer)
    except Exception as exc:  # refused, reset, timed out, TLS, malformed answer: all transient
        return Outcome(RETRY, None, None, None, None, type(exc).__name__)
    finally:
        connection.close()


# What a request on a keep-alive connection the server already closed fails with (never a
# timeout: a hung sidecar must cost one timeout, not two).
_STALE_CONNECTION_ERRORS = frozenset({
    "RemoteDisconnected", "BrokenPipeError", "ConnectionResetError", "ConnectionAbortedError",
})


class Connection(object):
    """One reusable connection to the sidecar (sender thread only).

    A request on a connection the server closed while idle fails before anything was
    processed; it is retried once at once on a fresh connection. Any other failure closes the
    connection and is a ``RETRY`` outcome for the caller's back-off.
    """

    def __init__(self, endpoint, token):
        self.endpoint = endpoint
        self._connection_class = (
            http.client.HTTPSConnection if endpoint.scheme == "https"
            else http.client.HTTPConnection)
        self._headers = {
            "Content-Type": "application/x-ndjson",
            "User-Agent": "hermes-prometheus-bridge",
        }
        if token:
            self._headers["Authorization"] = "Bearer " + token
        self._connection = None

    def post(self, body, timeout):
        reused = self._connection is not None
        outcome = self._attempt(body, timeout)
        if reused and outcome.error in _STALE_CONNECTION_ERRORS:
            outcome = self._attempt(body, timeout)  # the idle connection had been closed
        return outcome

    def close(self):
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _attempt(self, body, timeout):
        connection = self._connection
        if connection is None:
            connection = self._connection = self._connection_class(
                self.endpoint.host, self.endpoint.port, timeout=timeout)
        else:
            connection.timeout = timeout
            if connection.sock is not None:
                connection.sock.settimeout(timeout)
        try:
            headers = dict(self._headers)
            headers["Content-Length"] = str(len(body))
            connection.request("POST", self.endpoint.path, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read(_MAX_RESPONSE_BYTES)
            if response.will_close or not response.isclosed():
                # Closed by the server, or an answer longer than we read: start afresh.
                self.close()
            return classify(response.status, response.getheader("Retry-After"), answer)
        except Exception as exc:  # refused, reset, timed out, TLS, malformed answer: transient
            self.close()
            return Outcome(RETRY, None, None, None, None, type(exc).__name__)
