// Package crypto protects secrets the hub stores: it encrypts subscription
// signing secrets and sink credentials at rest (docs/concepts.md, Secrets at rest), and mints the
// random secrets and tokens those rows hold (signing secrets, tenant API keys).
//
// # Keys
//
// The operator supplies a key-encryption key (KEK) as an environment value,
// parsed by [ParseKeyring]. Ciphertexts are never made under the KEK itself:
// each KEK yields one AES-256 data key through HKDF-SHA256 with a
// purpose-and-version label as context, so a KEK that is (wrongly) shared with
// another system still produces an unrelated key here.
//
// # Envelope format (v1)
//
//	v1:<key id>:<base64url without padding of nonce || ciphertext || tag>
//
// The nonce is 12 random bytes, the tag 16 bytes. Key ids match
// [A-Za-z0-9_-]{1,32}, so the two colons split the envelope unambiguously and
// the whole value is printable ASCII, safe for a PostgreSQL text column.
//
// The additional authenticated data binds a ciphertext to the row and column
// it was written for, so a value copied into another row or field fails to
// decrypt. It is the row id and then the field name, each preceded by its byte
// length as an 8-byte big-endian unsigned integer:
//
//	len(rowID) || rowID || len(field) || field
//
// Length prefixes, unlike a separator byte, stay unambiguous whatever bytes
// the two parts contain.
//
// Random 96-bit nonces bound one data key to about 2^32 encryptions before a
// nonce collision becomes a concern; secrets are written a handful of times per
// subscription, and rotating the KEK starts a fresh data key.
package crypto
