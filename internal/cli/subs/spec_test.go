package subs

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// parse registers the spec flags and parses args, returning the flags and
// their Changed.
func parse(t *testing.T, forUpdate bool, args ...string) (*specFlags, func(string) bool) {
	t.Helper()
	var s specFlags
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s.register(fs, forUpdate)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &s, fs.Changed
}

func TestUpdateBodySendsOnlyTheFlagsGiven(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, `{}`},
		{"name", []string{"--name", "renamed"}, `{"name":"renamed"}`},
		{"url keeps the current type", []string{"--url", "https://x.example/h"}, `{"sink":{"type":"webhook","url":"https://x.example/h"}}`},
		{"type and url", []string{"--type", "pull"}, `{"sink":{"type":"pull"}}`},
		{"empty origin clears it", []string{"--origin", ""}, `{"origin":null}`},
		{"origin", []string{"--origin", "midaz"}, `{"origin":"midaz"}`},
		{"empty schedule restores the default", []string{"--retry-schedule", ""}, `{"retry_schedule":null}`},
		{"schedule", []string{"--retry-schedule", "0s,5s"}, `{"retry_schedule":["0s","5s"]}`},
		{"disable", []string{"--disabled"}, `{"enabled":false}`},
		{"enable", []string{"--disabled=false"}, `{"enabled":true}`},
		{"schema and timeout", []string{"--schema-major", "2", "--attempt-timeout", "3s"}, `{"schema_major":2,"attempt_timeout":"3s"}`},
		{"secret", []string{"--signing-secret", "s"}, `{"signing_secret":"s"}`},
		{"event types", []string{"--event-types", "a.*,b.c"}, `{"event_types":["a.*","b.c"]}`},
	}
	for _, c := range cases {
		s, changed := parse(t, true, c.args...)
		in, err := s.updateBody(changed, func() (string, error) { return "webhook", nil })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := json.Marshal(in)
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestUpdateBodyReadsTheCurrentTypeOnlyWhenNeeded(t *testing.T) {
	lookupFailed := errors.New("lookup failed")
	s, changed := parse(t, true, "--url", "https://x.example/h")
	if _, err := s.updateBody(changed, func() (string, error) { return "", lookupFailed }); !errors.Is(err, lookupFailed) {
		t.Errorf("got %v, want the lookup's error", err)
	}
	s, changed = parse(t, true, "--name", "n")
	if _, err := s.updateBody(changed, func() (string, error) { return "", lookupFailed }); err != nil {
		t.Errorf("a name change looked the sink up: %v", err)
	}
}

func TestCreateBodyLeavesDefaultsToTheHub(t *testing.T) {
	s, changed := parse(t, false, "--name", "feed", "--type", "pull")
	in, err := s.createBody(changed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(in)
	if want := `{"name":"feed","sink":{"type":"pull"},"event_types":["*"]}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	s, changed = parse(t, false, "--name", "feed")
	if _, err := s.createBody(changed); err == nil {
		t.Error("create without --type was accepted")
	}
}

// TestFileOnlySinkExamplesAreBodiesTheAPITakes keeps the examples the
// refusal prints usable as they are: a create body whose sink has its type.
func TestFileOnlySinkExamplesAreBodiesTheAPITakes(t *testing.T) {
	for sinkType := range fileOnlySinks {
		s, changed := parse(t, false, "--name", "orders", "--type", sinkType)
		_, err := s.createBody(changed)
		if err == nil {
			t.Fatalf("%s: accepted without --from-file", sinkType)
		}
		msg := err.Error()
		start, end := strings.Index(msg, "<<'EOF'\n"), strings.LastIndex(msg, "\n  EOF")
		if start < 0 || end < start {
			t.Fatalf("%s: no here-document in %q", sinkType, msg)
		}
		var body struct {
			Name string
			Sink struct{ Type string }
		}
		if err := json.Unmarshal([]byte(msg[start+len("<<'EOF'\n"):end]), &body); err != nil || body.Name != "orders" || body.Sink.Type != sinkType {
			t.Errorf("%s: the example does not decode to its create body (%v):\n%s", sinkType, err, msg)
		}
	}
}
