"""A webhook receiver for hubctl deliveries, on Python's standard library.

    WEBHOOK_SECRETS=whsec_... PORT=9000 python3 receiver.py

WEBHOOK_SECRETS is the subscription's signing secret; during a rotation, the
new one and the previous one, comma-separated.
"""
import hashlib
import hmac
import os
import re
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

SECRETS = [s.encode() for s in os.environ["WEBHOOK_SECRETS"].split(",") if s]
TOLERANCE = 300  # seconds either way: bounds how long a captured request replays
MAX_BODY = 1 << 20
SIGNATURE = re.compile(r"v1,sha256=([0-9a-fA-F]{64})")
seen = set()  # event ids handled; keep them in your database


def verified(timestamps, signature_lines, body):
    """Any signature matches any secret, over the raw body, and it is fresh."""
    if len(timestamps) != 1 or not timestamps[0].isdigit():
        return False
    timestamp = timestamps[0]
    if abs(time.time() - int(timestamp)) > TOLERANCE:
        return False
    message = b"v1:" + timestamp.encode() + b"." + body
    expected = [hmac.digest(secret, message, "sha256") for secret in SECRETS]
    # A proxy may fold the repeated header into one line joined with ", ".
    given = [bytes.fromhex(m) for line in signature_lines for m in SIGNATURE.findall(line)]
    return any(hmac.compare_digest(e, g) for e in expected for g in given)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self.answer(413)
        body = self.rfile.read(length)
        if not verified(self.headers.get_all("X-Webhook-Timestamp") or [],
                        self.headers.get_all("X-Webhook-Signature") or [], body):
            return self.answer(401)
        event_type = self.headers["X-Lerian-Event-Type"]
        if event_type == "hub.verification":
            return self.answer(204)  # the hub's probe: a 2xx is all it needs
        event_id = self.headers["X-Lerian-Event-Id"]
        if event_id in seen:  # a retry of an event already handled
            print("duplicate", event_id, flush=True)
        else:
            seen.add(event_id)
            print("event", event_id, event_type, body.decode(), flush=True)
        self.answer(204)

    def answer(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass  # keep stdout for the events


HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Receiver).serve_forever()
