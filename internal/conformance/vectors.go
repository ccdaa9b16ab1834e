package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// IngestVerdicts is ingest-verdicts.json: the state of the hub the cases
// run against and what ingest must decide for each record.
type IngestVerdicts struct {
	About string `json:"about"`
	// Roster maps a tenant id to its status, "active" or "inactive".
	Roster map[string]string `json:"roster"`
	// StoredEvents are already in the inbox, for the duplicate cases.
	StoredEvents  []StoredEvent `json:"stored_events"`
	MaxEventBytes int           `json:"max_event_bytes"`
	Cases         []IngestCase  `json:"cases"`
}

// StoredEvent names an event already in the inbox.
type StoredEvent struct {
	TenantID string `json:"tenant_id"`
	ID       string `json:"id"`
}

// IngestCase is one Kafka record and the verdict it must get.
type IngestCase struct {
	Name string `json:"name"`
	// Headers are key/value pairs in record order; keys may repeat.
	Headers [][2]string `json:"headers"`
	// Literal and Repeat are the two ways a case gives the record value;
	// read it with Value.
	Literal *string      `json:"value"`
	Repeat  *ValueRepeat `json:"value_repeat"`
	// Expect is "accept", "quarantine" or "discard"; Reason is the reason
	// code of a rejection.
	Expect string `json:"expect"`
	Reason string `json:"reason"`
	// EventKey and SchemaMajor are what an accepted event must carry.
	EventKey    string `json:"event_key"`
	SchemaMajor int    `json:"schema_major"`
}

// ValueRepeat spells a value too large to write out: Char, Count times.
type ValueRepeat struct {
	Char  string `json:"char"`
	Count int    `json:"count"`
}

// Value is the record value the case describes; nil when it gives none,
// which is how Kafka hands over a record without a value.
func (c IngestCase) Value() []byte {
	switch {
	case c.Repeat != nil:
		return []byte(strings.Repeat(c.Repeat.Char, c.Repeat.Count))
	case c.Literal != nil:
		return []byte(*c.Literal)
	default:
		return nil
	}
}

// Signatures is signatures.json: webhook signing and verification cases.
type Signatures struct {
	About  string       `json:"about"`
	Sign   []SignCase   `json:"sign"`
	Verify []VerifyCase `json:"verify"`
}

// SignCase is a signature the hub must produce.
type SignCase struct {
	Name              string `json:"name"`
	Secret            string `json:"secret"`
	Timestamp         string `json:"timestamp"`
	BodyBase64        string `json:"body_base64"`
	ExpectedSignature string `json:"expected_signature"`
}

// VerifyCase is a request a receiver checks; Expect is "ok" or the reason
// code of the rejection.
type VerifyCase struct {
	Name             string   `json:"name"`
	Secrets          []string `json:"secrets"`
	SignatureHeaders []string `json:"signature_headers"`
	Timestamp        string   `json:"timestamp"`
	Now              int64    `json:"now"`
	ToleranceSeconds int64    `json:"tolerance_seconds"`
	BodyBase64       string   `json:"body_base64"`
	Expect           string   `json:"expect"`
}

// LoadIngestVerdicts reads the repository's ingest-verdicts.json.
func LoadIngestVerdicts() (IngestVerdicts, error) {
	var v IngestVerdicts
	path, err := load("ingest-verdicts.json", &v)
	if err != nil {
		return IngestVerdicts{}, err
	}
	if len(v.Cases) == 0 {
		return IngestVerdicts{}, fmt.Errorf("%s holds no cases", path)
	}
	return v, nil
}

// LoadSignatures reads the repository's signatures.json.
func LoadSignatures() (Signatures, error) {
	var v Signatures
	path, err := load("signatures.json", &v)
	if err != nil {
		return Signatures{}, err
	}
	if len(v.Sign) == 0 || len(v.Verify) == 0 {
		return Signatures{}, fmt.Errorf("%s: expected both sign and verify cases, got %d and %d", path, len(v.Sign), len(v.Verify))
	}
	return v, nil
}

// load decodes the vector file name into v and returns its path.
func load(name string, v any) (string, error) {
	path, err := Path(name)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if err := decodeStrict(f, v); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return path, nil
}

// decodeStrict decodes one JSON document into v. Unknown fields and sections
// are errors: a vector the contract grows later fails the runners until they
// understand it, rather than being skipped.
func decodeStrict(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w (a new section or field needs a runner)", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the top-level object")
	}
	return nil
}
