// A webhook receiver for hubctl deliveries, on Node.js's standard library.
//
//   WEBHOOK_SECRETS=whsec_... PORT=9000 node receiver.js
//
// WEBHOOK_SECRETS is the subscription's signing secret; during a rotation,
// the new one and the previous one, comma-separated.
"use strict";
const crypto = require("node:crypto");
const http = require("node:http");

const secrets = process.env.WEBHOOK_SECRETS.split(",").filter(Boolean);
const TOLERANCE = 300; // seconds either way: bounds how long a captured request replays
const MAX_BODY = 1 << 20;
const seen = new Set(); // event ids handled; keep them in your database

// Any signature matches any secret, over the raw body, and it is fresh.
function verified(timestamps, signatureLines, body) {
  if (timestamps.length !== 1 || !/^\d+$/.test(timestamps[0])) return false;
  const timestamp = timestamps[0];
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > TOLERANCE) return false;
  // A proxy may fold the repeated header into one line joined with ", ".
  const given = signatureLines.flatMap((line) =>
    [...line.matchAll(/v1,sha256=([0-9a-fA-F]{64})/g)].map((m) => Buffer.from(m[1], "hex")));
  return secrets.some((secret) => {
    const expected = crypto.createHmac("sha256", secret).update(`v1:${timestamp}.`).update(body).digest();
    return given.some((g) => crypto.timingSafeEqual(expected, g));
  });
}

http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY) { res.writeHead(413).end(); req.destroy(); } else chunks.push(chunk);
  });
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const h = req.headersDistinct;
    if (!verified(h["x-webhook-timestamp"] ?? [], h["x-webhook-signature"] ?? [], body)) {
      return res.writeHead(401).end();
    }
    const eventType = req.headers["x-lerian-event-type"];
    if (eventType === "hub.verification") return res.writeHead(204).end(); // the hub's probe
    const id = req.headers["x-lerian-event-id"];
    if (seen.has(id)) { // a retry of an event already handled
      console.log("duplicate", id);
    } else {
      seen.add(id);
      console.log("event", id, eventType, body.toString());
    }
    res.writeHead(204).end();
  });
}).listen(Number(process.env.PORT), "127.0.0.1");
