package webhook

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSignAllKeepsSecretOrder(t *testing.T) {
	got := SignAll([]string{testSecret, testOldSecret}, testTimestamp, testBody)
	want := []string{Sign(testSecret, testTimestamp, testBody), Sign(testOldSecret, testTimestamp, testBody)}
	if !slices.Equal(got, want) {
		t.Fatalf("SignAll = %q, want %q", got, want)
	}
	if got := SignAll(nil, testTimestamp, testBody); len(got) != 0 {
		t.Fatalf("SignAll(nil) = %q, want none", got)
	}
}

func TestSignHeader(t *testing.T) {
	h := http.Header{}
	h.Add(HeaderSignature, "v1,sha256=stale-line-from-an-earlier-attempt")
	h.Set(HeaderTimestamp, "1")

	SignHeader(h, []string{testSecret, testOldSecret}, testTimestamp, testBody)

	if got := h.Values(HeaderTimestamp); !slices.Equal(got, []string{"1767225600"}) {
		t.Fatalf("%s = %q, want [1767225600]", HeaderTimestamp, got)
	}
	want := SignAll([]string{testSecret, testOldSecret}, testTimestamp, testBody)
	if got := h.Values(HeaderSignature); !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want one line per secret, newest first: %q", HeaderSignature, got, want)
	}
}

func TestVerifyRequestHeaders(t *testing.T) {
	now := time.Unix(testTimestamp, 0)
	valid := Sign(testSecret, testTimestamp, testBody)
	tests := []struct {
		name   string
		header http.Header
		want   string
	}{
		{"signed", http.Header{HeaderTimestamp: {"1767225600"}, HeaderSignature: {valid}}, "ok"},
		{"valid value on the second line", http.Header{HeaderTimestamp: {"1767225600"}, HeaderSignature: {"v1,sha256=00", valid}}, "ok"},
		{"no headers", http.Header{}, "malformed_signature"},
		{"no signature", http.Header{HeaderTimestamp: {"1767225600"}}, "malformed_signature"},
		{"no timestamp", http.Header{HeaderSignature: {valid}}, "malformed_signature"},
		{"two timestamps, even equal ones", http.Header{HeaderTimestamp: {"1767225600", "1767225600"}, HeaderSignature: {valid}}, "malformed_signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/hook", nil)
			r.Header = tt.header
			err := VerifyRequest(r, testBody, []string{testSecret}, now, DefaultTolerance)
			if got := reasonOf(t, err); got != tt.want {
				t.Fatalf("got %s (%v), want %s", got, err, tt.want)
			}
		})
	}
}

func TestRequireSignature(t *testing.T) {
	signed := func(body []byte, secret string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(body))
		SignHeader(r.Header, []string{secret}, time.Now().Unix(), body)
		return r
	}
	large := bytes.Repeat([]byte("x"), 64)
	tests := []struct {
		name     string
		secrets  []string
		maxBody  int64
		request  *http.Request
		wantCode int
		wantBody string // response body, or the body next read when next ran
	}{
		{"verified request reaches next with its body", []string{testSecret}, 0, signed(testBody, testSecret), http.StatusOK, string(testBody)},
		{"rotation: either secret verifies", []string{testOldSecret, testSecret}, 0, signed(testBody, testSecret), http.StatusOK, string(testBody)},
		{"wrong secret is refused with the reason", []string{testOldSecret}, 0, signed(testBody, testSecret), http.StatusUnauthorized, "signature_mismatch\n"},
		{"unsigned request is refused with the reason", []string{testSecret}, 0, httptest.NewRequest(http.MethodPost, "/hook", nil), http.StatusUnauthorized, "malformed_signature\n"},
		{"body at the limit is read whole", []string{testSecret}, int64(len(large)), signed(large, testSecret), http.StatusOK, string(large)},
		{"body over the limit", []string{testSecret}, int64(len(large)) - 1, signed(large, testSecret), http.StatusRequestEntityTooLarge, "request body too large\n"},
		{"no secret configured", []string{""}, 0, signed(testBody, testSecret), http.StatusInternalServerError, "webhook receiver has no signing secret configured\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					t.Errorf("next could not read the body: %v", err)
				}
				_, _ = w.Write(body)
			})
			rec := httptest.NewRecorder()
			RequireSignature(tt.secrets, tt.maxBody, next).ServeHTTP(rec, tt.request)
			if rec.Code != tt.wantCode || rec.Body.String() != tt.wantBody {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
		})
	}
}

func TestRequireSignatureCopiesSecrets(t *testing.T) {
	secrets := []string{testSecret}
	handler := RequireSignature(secrets, 0, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	secrets[0] = testOldSecret

	r := httptest.NewRequest(http.MethodPost, "/hook", bytes.NewReader(testBody))
	SignHeader(r.Header, []string{testSecret}, time.Now().Unix(), testBody)
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d %q: the handler saw the caller's later change to its slice", rec.Code, strings.TrimSpace(rec.Body.String()))
	}
}

func TestRequireSignatureNilBody(t *testing.T) {
	r := &http.Request{Method: http.MethodPost, Header: http.Header{}}
	rec := httptest.NewRecorder()
	RequireSignature([]string{testSecret}, 0, http.NotFoundHandler()).ServeHTTP(rec, r)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("got %d, want %d", rec.Code, http.StatusUnauthorized)
	}
}
