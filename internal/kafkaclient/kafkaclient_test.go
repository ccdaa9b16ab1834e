package kafkaclient

import (
	"testing"

	"github.com/hubctl/hubctl/internal/config"
)

func TestOptions(t *testing.T) {
	base := config.KafkaConfig{Brokers: []string{"127.0.0.1:9092"}}
	plain, err := Options(t.Context(), base, "test")
	if err != nil || len(plain) != 2 {
		t.Fatalf("plain: %d options, %v; want brokers and client id", len(plain), err)
	}

	secured := base
	secured.TLSEnabled = true
	secured.SASLMechanism = config.SASLScramSHA512
	secured.SASLUsername, secured.SASLPassword = "hub", "pw"
	opts, err := Options(t.Context(), secured, "test")
	if err != nil || len(opts) != 4 {
		t.Fatalf("TLS+SCRAM: %d options, %v; want 4", len(opts), err)
	}

	bad := base
	bad.SASLMechanism = "GSSAPI"
	if _, err := Options(t.Context(), bad, "test"); err == nil {
		t.Fatal("an unknown mechanism must be refused")
	}
}
