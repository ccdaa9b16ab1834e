package ingest

import (
	"regexp"
	"testing"
)

func TestAnyConsumable(t *testing.T) {
	include := regexp.MustCompile(`^lerian\.streaming\..+`)
	exclude := regexp.MustCompile(`\.(commands|dlq)$`)
	cases := []struct {
		name    string
		topics  []string
		exclude *regexp.Regexp
		want    bool
	}{
		{"no topics", nil, exclude, false},
		{"only others", []string{"orders", "payments"}, exclude, false},
		{"only excluded", []string{"lerian.streaming.x.dlq", "lerian.streaming.x.commands"}, exclude, false},
		{"one matching", []string{"orders", "lerian.streaming.x.created"}, exclude, true},
		{"excluded one without an exclusion", []string{"lerian.streaming.x.dlq"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := anyConsumable(c.topics, include, c.exclude); got != c.want {
				t.Fatalf("anyConsumable(%v) = %v, want %v", c.topics, got, c.want)
			}
		})
	}
}

// TestReadyBeforeAnyTopicMatches: a hub started before its producers
// created their topics has nothing to join and is ready; once a topic
// appears it joins and consumes it, and stays ready.
func TestReadyBeforeAnyTopicMatches(t *testing.T) {
	e := newEnv(t, "unrelated.topic")
	e.addTenants("t-a")
	m := e.start()
	waitFor(t, "ready with no topic to consume", m.Ready)
	if m.joined.Load() {
		t.Fatal("joined a group with no topic to consume; the test no longer covers the empty cluster")
	}

	e.createTopic(testTopic)
	e.produce(cloudEvent(0, "t-a", eventID(1), []byte("{}")))
	e.waitStored(testTopic, 1)
	waitFor(t, "the group joined", m.joined.Load)
	if !m.Ready() {
		t.Fatal("not ready after joining")
	}
}
