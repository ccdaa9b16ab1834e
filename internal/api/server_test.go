package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, h http.Handler, path string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body map[string]any
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: body is not JSON: %v", path, err)
		}
	}
	return rec.Code, body
}

func TestProbes(t *testing.T) {
	var dbErr error
	s := New(Options{Checks: map[string]ReadinessCheck{
		"database": func(context.Context) error { return dbErr },
	}})

	if code, _ := get(t, s, "/healthz"); code != http.StatusOK {
		t.Errorf("healthz = %d", code)
	}
	if code, _ := get(t, s, "/readyz"); code != http.StatusOK {
		t.Errorf("readyz with a healthy database = %d", code)
	}

	dbErr = errors.New("connection refused")
	code, body := get(t, s, "/readyz")
	if code != http.StatusServiceUnavailable || body["code"] != "not_ready" {
		t.Errorf("readyz with the database down = %d %v", code, body)
	}

	dbErr = nil
	s.Drain()
	if code, body := get(t, s, "/readyz"); code != http.StatusServiceUnavailable || body["code"] != "draining" {
		t.Errorf("readyz while draining = %d %v", code, body)
	}
	if code, _ := get(t, s, "/healthz"); code != http.StatusOK {
		t.Errorf("healthz must stay 200 while draining, got %d", code)
	}
}

func TestVersionAndMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "streaming_hub_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Inc()

	s := New(Options{Gatherer: reg})
	if code, body := get(t, s, "/version"); code != http.StatusOK || body["version"] == "" {
		t.Errorf("version = %d %v", code, body)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "streaming_hub_test_total 1") {
		t.Errorf("metrics = %d %q", rec.Code, rec.Body.String())
	}

	if code, _ := get(t, New(Options{}), "/metrics"); code != http.StatusNotFound {
		t.Errorf("metrics disabled should 404, got %d", code)
	}
}
