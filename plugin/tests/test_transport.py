"""transport.py: the endpoint and Retry-After parsing, the answer classification, and the one
keep-alive connection against a real socket server that answers exactly the bytes each test
scripts (Content-Length, chunked, close-delimited, a closed idle connection, a non-HTTP answer).
"""

import email.utils
import importlib
import socket
import threading
import unittest

from plugin.tests import support

transport = importlib.import_module(support.bridge_module.__package__ + ".transport")


class RawServer(object):
    """A loopback server answering each request with the next scripted raw response; the
    script item ``"close"`` closes the connection instead (an idle keep-alive timeout), and an
    item ``(answer, "close")`` sends the answer, then closes (a close-delimited body)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests = []  # (head, body) of each request answered
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d/v1/events?x=%%20" % self.port
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while self.script:
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with connection:
                while self.script:
                    data = b""
                    while b"\r\n\r\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    if not data:
                        break
                    head, _, body = data.partition(b"\r\n\r\n")
                    length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")][0])
                    while len(body) < length:
                        body += connection.recv(65536)
                    answer = self.script.pop(0)
                    if answer == "close":
                        break
                    self.requests.append((head, body))
                    if isinstance(answer, tuple):
                        connection.sendall(answer[0])
                        break
                    connection.sendall(answer)

    def close(self):
        self.sock.close()


SUMMARY = b'{"accepted": 3, "rejected": 1}'
ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: %d\r\n\r\n%s" % (len(SUMMARY), SUMMARY)


def connection_to(server, token="tok"):
    return transport.Connection(transport.parse_endpoint(server.url), token)


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

    def test_parse_retry_after_from_the_epoch(self):
        parse = transport.parse_retry_after
        self.assertEqual(parse("3"), 3.0)
        self.assertEqual(parse(" 0.25 "), 0.25)
        self.assertIsNone(parse("-1"))
        self.assertIsNone(parse("soon"))
        self.assertIsNone(parse(None))
        self.assertEqual(parse("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0), 6.0)
        self.assertEqual(parse("Thu, 01 Jan 1970 00:00:10 GMT", now=20.0), 0.0)

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
    def serve(self, script):
        server = RawServer(script)
        self.addCleanup(server.close)
        return server

    def post(self, server, body=b'{"x":1}\n', times=1, token="tok"):
        connection = connection_to(server, token)
        self.addCleanup(connection.close)
        return [connection.post(body, 5.0) for _ in range(times)]

    def test_posts_over_one_keep_alive_connection_with_the_token(self):
        server = self.serve([ACCEPTED, ACCEPTED])
        first, second = self.post(server, times=2)
        self.assertEqual(first, transport.Outcome(transport.DELIVERED, 202, None, 3, 1, None))
        self.assertEqual(second.kind, transport.DELIVERED)
        self.assertEqual(server.connections, 1)
        head, body = server.requests[0]
        self.assertEqual(body, b'{"x":1}\n')
        lines = head.split(b"\r\n")
        self.assertEqual(lines[0], b"POST /v1/events?x=%20 HTTP/1.1")
        self.assertIn(b"Authorization: Bearer tok", lines)
        self.assertIn(b"Content-Type: application/x-ndjson", lines)
        self.assertIn(b"Content-Length: 8", lines)

    def test_sends_no_authorization_without_a_token(self):
        server = self.serve([ACCEPTED])
        self.post(server, token="")
        self.assertNotIn(b"Authorization", server.requests[0][0])

    def test_chunked_and_keep_alive_answers_are_read_and_the_connection_reused(self):
        pieces = [b'{"accepted"', b':1,"x":0', b"}"]
        chunked = b"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n" + b"".join(
            b"%x;ext=1\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
        plain = (b"HTTP/1.1 202 Accepted\r\nContent-Length: 14\r\n\r\n{\"accepted\":1}")
        server = self.serve([chunked, plain])
        outcomes = self.post(server, times=2)
        self.assertEqual([(o.kind, o.status, o.accepted) for o in outcomes],
                         [("delivered", 202, 1), ("delivered", 202, 1)])
        self.assertEqual(server.connections, 1)

    def test_reads_a_close_delimited_answer_and_reconnects_after_it(self):
        close_delimited = b'HTTP/1.1 202 Accepted\r\n\r\n{"accepted": 1}'
        server = self.serve([(close_delimited, "close"), ACCEPTED])
        first, second = self.post(server, times=2)
        self.assertEqual((first.kind, first.accepted), (transport.DELIVERED, 1))
        self.assertEqual((second.kind, second.accepted), (transport.DELIVERED, 3))
        self.assertEqual(server.connections, 2)

    def test_a_connection_closed_while_idle_is_replaced_without_a_retry_outcome(self):
        plain = b"HTTP/1.1 202 Accepted\r\nContent-Length: 14\r\n\r\n{\"accepted\":1}"
        retry = b"HTTP/1.1 503 Busy\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n"
        server = self.serve([plain, "close", plain, retry])
        outcomes = self.post(server, times=3)
        self.assertEqual([(o.kind, o.status) for o in outcomes],
                         [("delivered", 202), ("delivered", 202), ("retry", 503)])
        self.assertEqual(outcomes[2].retry_after, 2.0)
        self.assertEqual(len(server.requests), 3)  # each body processed once
        self.assertEqual(server.connections, 2)

    def test_a_first_request_that_finds_no_answer_is_a_retry_outcome_not_resent(self):
        server = self.serve(["close"])
        self.assertEqual(self.post(server),
                         [transport.Outcome(transport.RETRY, None, None, None, None, "RemoteDisconnected")])
        self.assertEqual(server.connections, 1)

    def test_an_answer_that_is_not_http_is_a_retry_outcome(self):
        server = self.serve([b"SSH-2.0-OpenSSH\r\n\r\n"])
        [outcome] = self.post(server)
        self.assertEqual((outcome.kind, outcome.error), (transport.RETRY, "BadResponse"))

    def test_a_refused_connection_is_a_retry_outcome(self):
        with socket.create_server(("127.0.0.1", 0)) as probe:
            port = probe.getsockname()[1]
        connection = transport.Connection(transport.parse_endpoint("http://127.0.0.1:%d/" % port), "")
        outcome = connection.post(b"{}\n", 5)
        self.assertEqual(outcome, transport.Outcome(transport.RETRY, None, None, None, None, "ConnectionRefusedError"))


if __name__ == "__main__":
    unittest.main()
