// Package webhook signs and verifies hubctl webhook deliveries.
//
// A delivery is a POST whose body is the event data, byte for byte. The hub
// sends the attempt time as X-Webhook-Timestamp (Unix seconds) and
// X-Webhook-Signature: "v1,sha256=" + hex(HMAC-SHA256(secret, "v1:" +
// timestamp + "." + body)). The key is the secret exactly as issued, "whsec_"
// prefix included. During a secret rotation the hub sends one signature line per
// secret, newest first, and a receiver accepts the request when any signature
// matches any secret it holds, so it may switch secrets at any point of the
// overlap. Rejecting timestamps further than a tolerance from the receiver's
// clock bounds how long a captured request can be replayed; deduplicate on
// X-Lerian-Event-Id, which is stable across retries. Verify the raw body before
// decoding it: re-encoded JSON does not carry the same signature.
//
// A subscription may sign the Standard Webhooks way instead
// (standardwebhooks.com): webhook-id (the event id), webhook-timestamp and
// webhook-signature, "v1," + base64(HMAC-SHA256(key, id + "." + timestamp
// + "." + body)) with the key decoded from the base64 after "whsec_"; during
// a rotation the values of both secrets are space-separated. SignStandard
// and VerifyStandard implement it, and the official libraries verify what
// SignStandard makes.
package webhook
