// Package receivertest checks a webhook receiver the way the hub treats it:
// it sends signed deliveries, a verification probe, a retry of the same
// event, rotations, and forgeries to a receiver over HTTP and checks what the
// receiver answered and printed. The receiver examples of docs/consuming.md,
// whatever their language, must all pass the same checks.
package receivertest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hubctl/hubctl/pkg/webhook"
)

// The secrets a receiver under test must be started with, in this order:
// the current secret, then the previous one (a rotation in progress).
const (
	CurrentSecret  = "whsec_current-secret-of-the-example-0001"
	PreviousSecret = "whsec_previous-secret-of-the-example-002"
	// Secrets is the value of WEBHOOK_SECRETS the examples read.
	Secrets = CurrentSecret + "," + PreviousSecret
)

// forgedSecret is one the receiver does not hold.
const forgedSecret = "whsec_guessed-by-an-attacker-00000000000"

// Output returns everything the receiver printed so far.
type Output func() string

type delivery struct {
	name       string
	eventID    string
	eventType  string
	body       string
	secrets    []string // signing secrets, in header order
	timestamp  time.Time
	tamper     bool // change the body after signing
	joinHeader bool // one signature line joined with ", ", as some proxies fold them
	wantOK     bool
	wantLine   string // a line the receiver must print; empty: none required
}

// Check runs every case against the receiver at url. The receiver must
// answer 2xx to an authentic delivery and 4xx to a forged or stale one,
// print "event <id> <type> <body>" for each new event, "duplicate <id>" for
// a retry of one it has handled, and nothing for the verification probe.
func Check(t *testing.T, url string, output Output) {
	t.Helper()
	now := time.Now()
	const first, second = "0190b6a2-7c1e-7d3a-9f00-0000000000a1", "0190b6a2-7c1e-7d3a-9f00-0000000000a2"
	cases := []delivery{
		{name: "verification probe", eventType: webhook.VerificationEventType,
			body:    `{"type":"hub.verification","subscription_id":"0190b6a2-0000-7000-8000-000000000001","challenge":"c2VjcmV0"}`,
			secrets: []string{CurrentSecret}, timestamp: now, wantOK: true},
		{name: "delivery", eventID: first, eventType: "transaction.posted", body: `{"amount":1000}`,
			secrets: []string{CurrentSecret}, timestamp: now, wantOK: true,
			wantLine: "event " + first + ` transaction.posted {"amount":1000}`},
		{name: "retry of the same event", eventID: first, eventType: "transaction.posted", body: `{"amount":1000}`,
			secrets: []string{CurrentSecret}, timestamp: now.Add(5 * time.Second), wantOK: true,
			wantLine: "duplicate " + first},
		{name: "signed with the previous secret only", eventID: second, eventType: "balance.config-changed",
			body: `{"limit":5}`, secrets: []string{PreviousSecret}, timestamp: now, wantOK: true,
			wantLine: "event " + second + ` balance.config-changed {"limit":5}`},
		{name: "rotation overlap, a newer secret the receiver lacks first", eventID: second,
			eventType: "balance.config-changed", body: `{"limit":5}`,
			secrets: []string{forgedSecret, PreviousSecret}, timestamp: now, wantOK: true,
			wantLine: "duplicate " + second},
		{name: "signature lines folded into one", eventID: second, eventType: "balance.config-changed",
			body: `{"limit":5}`, secrets: []string{forgedSecret, CurrentSecret}, timestamp: now, joinHeader: true,
			wantOK: true},
		{name: "unknown secret", eventID: "0190b6a2-7c1e-7d3a-9f00-0000000000f1", eventType: "transaction.posted",
			body: `{"amount":1}`, secrets: []string{forgedSecret}, timestamp: now},
		{name: "tampered body", eventID: "0190b6a2-7c1e-7d3a-9f00-0000000000f2", eventType: "transaction.posted",
			body: `{"amount":1000}`, secrets: []string{CurrentSecret}, timestamp: now, tamper: true},
		{name: "stale timestamp", eventID: "0190b6a2-7c1e-7d3a-9f00-0000000000f3", eventType: "transaction.posted",
			body: `{"amount":1000}`, secrets: []string{CurrentSecret}, timestamp: now.Add(-time.Hour)},
		{name: "timestamp from the future", eventID: "0190b6a2-7c1e-7d3a-9f00-0000000000f4", eventType: "transaction.posted",
			body: `{"amount":1000}`, secrets: []string{CurrentSecret}, timestamp: now.Add(time.Hour)},
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for i, c := range cases {
		status, err := send(client, url, c, i)
		if err != nil {
			t.Fatalf("%s: %v\nreceiver output:\n%s", c.name, err, output())
		}
		if ok := status >= 200 && status < 300; ok != c.wantOK {
			t.Errorf("%s: receiver answered %d, want %s", c.name, status, map[bool]string{true: "2xx", false: "a refusal"}[c.wantOK])
		}
		if c.wantLine != "" {
			waitForLine(t, c.name, c.wantLine, output)
		}
	}
	printed := output()
	for _, c := range cases {
		if !c.wantOK && strings.Contains(printed, c.eventID) {
			t.Errorf("%s: the receiver handled a delivery it should have refused:\n%s", c.name, printed)
		}
	}
	if strings.Contains(printed, "challenge") {
		t.Errorf("the verification probe was handled as an event:\n%s", printed)
	}
}

func send(client *http.Client, url string, c delivery, n int) (int, error) {
	body := []byte(c.body)
	header := http.Header{}
	webhook.SignHeader(header, c.secrets, c.timestamp.Unix(), body)
	if c.tamper {
		body = bytes.Replace(body, []byte("1000"), []byte("9000"), 1)
	}
	if c.joinHeader {
		header[webhook.HeaderSignature] = []string{strings.Join(header.Values(webhook.HeaderSignature), ", ")}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "hubctl/receivertest")
	req.Header.Set(webhook.HeaderEventType, c.eventType)
	req.Header.Set(webhook.HeaderTenantID, "acme")
	req.Header.Set(webhook.HeaderDeliveryID, fmt.Sprintf("0190b6a2-7c1e-7d3a-9f00-%012d", n))
	req.Header.Set(webhook.HeaderSchemaVersion, "1.0.0")
	if c.eventID != "" {
		req.Header.Set(webhook.HeaderEventID, c.eventID)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// waitForLine waits for a line: a receiver in another process prints
// through its own buffers, a moment after it answered.
func waitForLine(t *testing.T, name, want string, output Output) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, line := range strings.Split(output(), "\n") {
			if strings.TrimSpace(line) == want {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: the receiver did not print %s; it printed:\n%s", name, strconv.Quote(want), output())
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
