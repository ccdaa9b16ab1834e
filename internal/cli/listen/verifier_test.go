package listen

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestVerifierHandsEveryRequestToObserve checks NewVerifier answers as
// listen does and reports each request, verdict, duplicate and body
// included, to observe.
func TestVerifierHandsEveryRequestToObserve(t *testing.T) {
	type seen struct {
		verdict   string
		duplicate bool
		body      string
	}
	var got []seen
	h := NewVerifier([]string{testSecret}, func() time.Time { return testNow }, func(d Delivery, body []byte) {
		got = append(got, seen{d.Verdict, d.Duplicate, string(body)})
	})
	requests := []*http.Request{
		signed(testSecret, "bench.delivered", "ev-1", "del-1", `{"n":1}`),
		signed(testSecret, "bench.delivered", "ev-1", "del-2", `{"n":1}`),
		signed("whsec_some-other-secret-0123456789", "bench.delivered", "ev-2", "del-3", `{"n":2}`),
	}
	wantStatus := []int{http.StatusOK, http.StatusOK, http.StatusUnauthorized}
	want := []seen{{"ok", false, `{"n":1}`}, {"ok", true, `{"n":1}`}, {"signature_mismatch", false, `{"n":2}`}}
	for i, r := range requests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != wantStatus[i] {
			t.Errorf("request %d answered %d, want %d", i, w.Code, wantStatus[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("observed %d requests, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d observed as %+v, want %+v", i, got[i], want[i])
		}
	}
}
