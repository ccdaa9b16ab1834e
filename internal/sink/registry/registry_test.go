package registry

import "testing"

func TestNewRegistersEveryType(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, name := range []string{"webhook", "pull", "sqs", "rabbitmq", "eventbridge", "nats", "s3", "kafka", "pubsub"} {
		if _, err := s.Lookup(name); err != nil {
			t.Errorf("%s not registered: %v", name, err)
		}
	}
}
