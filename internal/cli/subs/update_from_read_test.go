package subs_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/eventbridgetest"
	"github.com/hubctl/hubctl/internal/testutil/goawstest"
	"github.com/hubctl/hubctl/pkg/webhook"
)

// signedReceiver is a webhook destination that accepts only requests
// signed by secret alone: a probe after a rotation would carry a second
// signature, one signed by anything else none that verifies.
type signedReceiver struct {
	url      string
	requests atomic.Int64
	rejected atomic.Int64
}

func newSignedReceiver(t *testing.T, secret string) *signedReceiver {
	rcv := &signedReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rcv.requests.Add(1)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhook.DefaultMaxBodyBytes))
		if err == nil && len(r.Header.Values(webhook.HeaderSignature)) == 1 {
			err = webhook.VerifyRequest(r, body, []string{secret}, time.Now(), webhook.DefaultTolerance)
		} else if err == nil {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			rcv.rejected.Add(1)
			http.Error(w, "not signed by the expected secret alone", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	rcv.url = srv.URL
	return rcv
}

// signedSQS stands in front of goaws, which accepts any key, and passes on
// only requests signed with the given access key and secret key.
type signedSQS struct {
	endpoint string
	rejected atomic.Int64
}

func newSignedSQS(t *testing.T, goaws *goawstest.Server, accessKeyID, secretKey string) *signedSQS {
	target, err := url.Parse(goaws.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	s := &signedSQS{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = eventbridgetest.VerifySigV4(r, body, accessKeyID, secretKey, goawstest.Region, "sqs", time.Now())
		}
		if err != nil {
			s.rejected.Add(1)
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.endpoint = srv.URL
	return s
}

// mustRun runs hubctl and fails the test unless it exits 0.
func mustRun(t *testing.T, env map[string]string, stdin string, args ...string) string {
	t.Helper()
	r := clitest.RunWithStdin(t, env, stdin, args...)
	if r.Code != 0 {
		t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
	}
	return r.Stdout
}

func idOf(t *testing.T, printed string) string {
	t.Helper()
	var sub struct{ ID string }
	if err := json.Unmarshal([]byte(printed), &sub); err != nil || sub.ID == "" {
		t.Fatalf("no id in %s (%v)", printed, err)
	}
	return sub.ID
}

func decodeObject(t *testing.T, doc string) map[string]any {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal([]byte(doc), &fields); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	return fields
}

// editedCopy writes doc to a file of its own with one text replaced, as a
// person editing it would, leaving every other byte as get printed it.
func editedCopy(t *testing.T, doc, old, replacement string) string {
	t.Helper()
	if strings.Count(doc, old) != 1 {
		t.Fatalf("%q is not in the document exactly once:\n%s", old, doc)
	}
	path := filepath.Join(t.TempDir(), "subscription.json")
	if err := os.WriteFile(path, []byte(strings.Replace(doc, old, replacement, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// assertOnlyChanged checks that after differs from before in field, which
// now holds want, and in updated_at, and in nothing else.
func assertOnlyChanged(t *testing.T, before, after, field string, want any) {
	t.Helper()
	b, a := decodeObject(t, before), decodeObject(t, after)
	if !reflect.DeepEqual(a[field], want) {
		t.Errorf("%s is %v after the update, want %v", field, a[field], want)
	}
	b[field] = want
	delete(b, "updated_at")
	delete(a, "updated_at")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the update changed more than %s:\nbefore %s\nafter  %s", field, before, after)
	}
}

func TestUpdateFromFileTakesBackWhatGetPrinted(t *testing.T) {
	const signingSecret = "whsec_read_back_0123456789abcdef"
	const accessKeyID, secretKey = "AKIAHUBCTLREADBACK01", "hubctl/read/back/secret/key/0123456789"
	hook := newSignedReceiver(t, signingSecret)
	goaws := goawstest.Start(t)
	queue := newSignedSQS(t, goaws, accessKeyID, secretKey)

	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			var printed []string
			run := func(stdin string, args ...string) string {
				t.Helper()
				out := mustRun(t, m.env, stdin, args...)
				printed = append(printed, out)
				return out
			}

			// Create prints the signing secret, once; nothing after may.
			hookID := idOf(t, mustRun(t, m.env, "", "subs", "create", "--name", "orders", "--type", "webhook", "--url", hook.url,
				"--signing-secret", signingSecret, "--event-types", "transaction.*", "--retry-schedule", "0s,5s", "-o", "json"))
			before := run("", "subs", "get", hookID, "-o", "json")
			file := editedCopy(t, before, `"name": "orders"`, `"name": "orders v2"`)
			probes := hook.requests.Load()
			run("", "subs", "update", hookID, "--from-file", file, "-o", "json")
			if hook.requests.Load() != probes {
				t.Error("the unchanged webhook sink was verified again")
			}
			assertOnlyChanged(t, before, run("", "subs", "get", hookID, "-o", "json"), "name", "orders v2")
			// The receiver accepts only the created secret, alone.
			run("", "subs", "verify", hookID, "-o", "json")
			if hook.rejected.Load() != 0 {
				t.Error("the receiver saw a request not signed by the created secret alone")
			}

			create, err := json.Marshal(map[string]any{"name": "queue", "event_types": []string{"transaction.*"}, "sink": map[string]any{
				"type": "sqs", "queue_url": goaws.NewQueue(t, false), "region": goawstest.Region, "endpoint": queue.endpoint,
				"access_key_id": accessKeyID, "secret_access_key": secretKey,
			}})
			if err != nil {
				t.Fatal(err)
			}
			queueID := idOf(t, run(string(create), "subs", "create", "--from-file", "-", "-o", "json"))
			before = run("", "subs", "get", queueID, "-o", "json")
			if sink, _ := decodeObject(t, before)["sink"].(map[string]any); sink["access_key_id"] != "****" || sink["secret_access_key"] != "****" {
				t.Fatalf("get does not mask the keys:\n%s", before)
			}
			file = editedCopy(t, before, `"transaction.*"`, `"account.*"`)
			mark := goaws.Mark()
			run("", "subs", "update", queueID, "--from-file", file, "-o", "json")
			if n := len(goaws.Requests(mark, "GetQueueAttributes")); n != 0 {
				t.Errorf("the unchanged SQS sink was verified again (%d probes)", n)
			}
			assertOnlyChanged(t, before, run("", "subs", "get", queueID, "-o", "json"), "event_types", []any{"account.*"})
			// The proxy passes on only requests signed with the created keys.
			run("", "subs", "verify", queueID, "-o", "json")
			if n := len(goaws.Requests(mark, "GetQueueAttributes")); n != 1 || queue.rejected.Load() != 0 {
				t.Errorf("verify after the update: %d probes reached the queue, %d were refused for their signature", n, queue.rejected.Load())
			}

			for _, out := range printed {
				for _, secret := range []string{signingSecret, accessKeyID, secretKey} {
					if strings.Contains(out, secret) {
						t.Errorf("a secret was printed:\n%s", out)
					}
				}
			}
		})
	}
}

func TestUpdateFromFileRefusesAnotherSubscriptionsDocument(t *testing.T) {
	for _, m := range modes(t) {
		t.Run(m.name, func(t *testing.T) {
			firstID := idOf(t, mustRun(t, m.env, "", "subs", "create", "--name", "first", "--type", "pull", "-o", "json"))
			secondID := idOf(t, mustRun(t, m.env, "", "subs", "create", "--name", "second", "--type", "pull", "-o", "json"))
			first := mustRun(t, m.env, "", "subs", "get", firstID, "-o", "json")
			second := mustRun(t, m.env, "", "subs", "get", secondID, "-o", "json")

			file := editedCopy(t, first, `"name": "first"`, `"name": "second"`)
			for _, r := range []clitest.Result{
				clitest.Run(t, m.env, "subs", "update", secondID, "--from-file", file),
				clitest.RunWithStdin(t, m.env, first, "subs", "update", secondID, "--from-file", "-"),
				clitest.RunWithStdin(t, m.env, first, "subs", "update", "second", "--from-file", "-"),
			} {
				if r.Code != cmdutil.ExitUsage || r.Stdout != "" || !strings.Contains(r.Stderr, "is subscription "+firstID+", not "+secondID) {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming both ids", r.Code, r.Stdout, r.Stderr)
				}
			}
			if after := mustRun(t, m.env, "", "subs", "get", secondID, "-o", "json"); after != second {
				t.Errorf("the refused update changed the subscription:\nbefore %s\nafter  %s", second, after)
			}

			// Named, the subscription takes back its own read.
			disabled := strings.Replace(first, `"enabled": true`, `"enabled": false`, 1)
			if updated := mustRun(t, m.env, disabled, "subs", "update", "first", "--from-file", "-", "-o", "json"); !strings.Contains(updated, firstID) {
				t.Errorf("update by name from its own read: %s", updated)
			}
			assertOnlyChanged(t, first, mustRun(t, m.env, "", "subs", "get", firstID, "-o", "json"), "enabled", false)

			r := clitest.RunWithStdin(t, m.env, strings.Replace(first, `"name": "first"`, `"name": "first",
  "colour": "blue"`, 1), "subs", "update", firstID, "--from-file", "-")
			if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, `unknown field "colour"`) {
				t.Errorf("a field that is neither read-only nor writable: exit %d, stderr %q", r.Code, r.Stderr)
			}

			// The dropping is the CLI's: the API still refuses a read sent
			// back as a PATCH body.
			server, remote := m.env["HUBCTL_SERVER"]
			if !remote {
				return
			}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, server+"/v1/subscriptions/"+firstID, strings.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+m.env["HUBCTL_TOKEN"])
			req.Header.Set("Content-Type", "application/json")
			if tenant, named := m.env["HUBCTL_TENANT"]; named {
				req.Header.Set("X-Tenant-Id", tenant)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "invalid_request") {
				t.Errorf("PATCH with a read as the body: %d %s, want 400 invalid_request", resp.StatusCode, body)
			}
		})
	}
}
