"""transport.py: the endpoint and Retry-After parsing, the answer classification, and the one
keep-alive connection against a real socket server that answers exactly the bytes each test
scripts (Content-Length, chunked, close-delimited, a closed idle connection, a non-HTTP answer).
"""

import email.utils
import socket
import threading
import unittest

from plugin.tests import support  # noqa: F401  (puts the plugin on the path)
from hermes_prometheus_bridge import transport


class ScriptedServer(object):
    """Accepts connections on 127.0.0.1; for each request read, sends the next scripted answer.

    An answer of ``None`` closes the connection without answering. Records every request's
    bytes and how many connections were accepted.
    """

    def __init__(self, answers, close_after_each=False):
        self.answers = list(answers)
        self.close_after_each = close_after_each
        self.requests = []
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._open = []

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *_exc):
        self._listener.close()
        for conn in self._open:
            conn.close()
        self._thread.join(5)

    def _serve(self):
        while self.answers:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            self._open.append(conn)
            while self.answers:
                request = self._read_request(conn)
                if request is None:
                    break
                self.requests.append(request)
                answer = self.answers.pop(0)
                if answer is None:
                    conn.close()
                    break
                conn.sendall(answer)
                if self.close_after_each:
                    conn.close()
                    break

    @staticmethod
    def _read_request(conn):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(body) < length:
            body += conn.recv(65536)
        return head + b"\r\n\r\n" + body


def connection_to(server, token="tok"):
    return transport.Connection(transport.parse_endpoint("http://127.0.0.1:%d/v1/events" % server.port), token)


SUMMARY = b'{"accepted": 3, "rejected": 1}'
ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: %d\r\n\r\n%s" % (len(SUMMARY), SUMMARY)


class ParsingTest(unittest.TestCase):
    def test_parse_endpoint(self):
        self.assertEqual(transport.parse_endpoint("http://user:pw@sidecar:9400/v1/events?x=1"),
                         transport.Endpoint("http", "sidecar", 9400, "/v1/events?x=1", "sidecar:9400"))
        self.assertEqual(transport.parse_endpoint("HTTPS://h"), transport.Endpoint("https", "h", 443, "/", "h:443"))
        self.assertEqual(transport.parse_endpoint("http://h").port, 80)
        with self.assertRaises(ValueError):
            transport.parse_endpoint("ftp://h")

    def test_parse_retry_after(self):
        now = 1_800_000_000.0
        self.assertEqual(transport.parse_retry_after("7", now), 7.0)
        self.assertEqual(transport.parse_retry_after(" 0.5 ", now), 0.5)
        self.assertEqual(transport.parse_retry_after(email.utils.formatdate(now + 30, usegmt=True), now), 30.0)
        self.assertEqual(transport.parse_retry_after(email.utils.formatdate(now - 30, usegmt=True), now), 0.0)
        for value in (None, "", "-1", "nan", "inf", "soon"):
            with self.subTest(value=value):
                self.assertIsNone(transport.parse_retry_after(value, now))

    def test_classify(self):
        self.assertEqual(transport.classify(202, None, b'{"accepted": 5, "rejected": 0}'),
                         transport.Outcome(transport.DELIVERED, 202, None, 5, 0, None))
        self.assertEqual(transport.classify(200, None, b'{"accepted": "5"}'),
                         transport.Outcome(transport.DELIVERED, 200, None, None, None, None))
        self.assertEqual(transport.classify(204, None, b"not json"),
                         transport.Outcome(transport.DELIVERED, 204, None, None, None, None))
        for status in (429, 502, 503, 504):
            with self.subTest(status=status):
                self.assertEqual(transport.classify(status, "3", b""),
                                 transport.Outcome(transport.RETRY, status, 3.0, None, None, None))
        for status in (400, 401, 403, 413, 415, 500):
            with self.subTest(status=status):
                self.assertEqual(transport.classify(status, "3", b"").kind, transport.REFUSED)


class ConnectionTest(unittest.TestCase):
    def test_posts_over_one_keep_alive_connection_with_the_token(self):
        with ScriptedServer([ACCEPTED, ACCEPTED]) as server:
            connection = connection_to(server)
            first = connection.post(b'{"a":1}\n', 5)
            second = connection.post(b'{"b":2}\n', 5)
            connection.close()
        self.assertEqual(first, transport.Outcome(transport.DELIVERED, 202, None, 3, 1, None))
        self.assertEqual(second.kind, transport.DELIVERED)
        self.assertEqual(server.connections, 1)
        head, _, body = server.requests[0].partition(b"\r\n\r\n")
        self.assertEqual(body, b'{"a":1}\n')
        lines = head.split(b"\r\n")
        self.assertEqual(lines[0], b"POST /v1/events HTTP/1.1")
        self.assertIn(b"Authorization: Bearer tok", lines)
        self.assertIn(b"Content-Type: application/x-ndjson", lines)
        self.assertIn(b"Content-Length: 8", lines)

    def test_sends_no_authorization_without_a_token(self):
        with ScriptedServer([ACCEPTED]) as server:
            connection = connection_to(server, token="")
            connection.post(b"{}\n", 5)
            connection.close()
        self.assertNotIn(b"Authorization", server.requests[0])

    def test_reads_a_chunked_answer(self):
        chunked = (b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n"
                   b"e;ext=1\r\n{\"accepted\": 2\r\n1\r\n}\r\n0\r\n\r\n")
        with ScriptedServer([chunked]) as server:
            connection = connection_to(server)
            outcome = connection.post(b"{}\n", 5)
            connection.close()
        self.assertEqual(outcome, transport.Outcome(transport.DELIVERED, 202, None, 2, None, None))

    def test_reads_a_close_delimited_answer_and_reconnects_after_it(self):
        close_delimited = b'HTTP/1.1 202 Accepted\r\n\r\n{"accepted": 1}'
        with ScriptedServer([close_delimited, ACCEPTED], close_after_each=True) as server:
            connection = connection_to(server)
            first = connection.post(b"{}\n", 5)
            second = connection.post(b"{}\n", 5)
            connection.close()
        self.assertEqual(first.accepted, 1)
        self.assertEqual(second.accepted, 3)
        self.assertEqual(server.connections, 2)

    def test_retries_once_on_a_fresh_connection_when_the_idle_one_was_closed(self):
        # The first answer is delivered; the server then closes the idle connection without
        # answering the next request, which is sent again on a new connection.
        with ScriptedServer([ACCEPTED, None, ACCEPTED]) as server:
            connection = connection_to(server)
            connection.post(b"{}\n", 5)
            outcome = connection.post(b'{"again":1}\n', 5)
            connection.close()
        self.assertEqual(outcome.kind, transport.DELIVERED)
        self.assertEqual(server.connections, 2)
        self.assertEqual([request.partition(b"\r\n\r\n")[2] for request in server.requests],
                         [b"{}\n", b'{"again":1}\n', b'{"again":1}\n'])

    def test_a_first_request_that_finds_no_answer_is_a_retry_outcome_not_resent(self):
        with ScriptedServer([None]) as server:
            connection = connection_to(server)
            outcome = connection.post(b"{}\n", 5)
            connection.close()
        self.assertEqual(outcome, transport.Outcome(transport.RETRY, None, None, None, None, "RemoteDisconnected"))
        self.assertEqual(len(server.requests), 1)

    def test_an_answer_that_is_not_http_is_a_retry_outcome(self):
        with ScriptedServer([b"SSH-2.0-OpenSSH\r\n\r\n"]) as server:
            connection = connection_to(server)
            outcome = connection.post(b"{}\n", 5)
            connection.close()
        self.assertEqual(outcome.kind, transport.RETRY)
        self.assertEqual(outcome.error, "BadResponse")

    def test_a_refused_connection_is_a_retry_outcome(self):
        with socket.create_server(("127.0.0.1", 0)) as probe:
            port = probe.getsockname()[1]
        connection = transport.Connection(transport.parse_endpoint("http://127.0.0.1:%d/" % port), "")
        outcome = connection.post(b"{}\n", 5)
        self.assertEqual(outcome, transport.Outcome(transport.RETRY, None, None, None, None, "ConnectionRefusedError"))

    def test_overload_answers_carry_their_retry_after(self):
        busy = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n"
        with ScriptedServer([busy]) as server:
            connection = connection_to(server)
            outcome = connection.post(b"{}\n", 5)
            connection.close()
        self.assertEqual(outcome, transport.Outcome(transport.RETRY, 503, 2.0, None, None, None))


if __name__ == "__main__":
    unittest.main()
