package events

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/config"
)

func TestKafkaExitCode(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"unknown topic", fmt.Errorf("produce: %w", kerr.UnknownTopicOrPartition), cmdutil.ExitNotFound},
		{"bad password", kerr.SaslAuthenticationFailed, cmdutil.ExitUnauthorized},
		{"topic ACL", kerr.TopicAuthorizationFailed, cmdutil.ExitUnauthorized},
		{"connection refused", refused, cmdutil.ExitUnavailable},
		{"record timeout", kgo.ErrRecordTimeout, cmdutil.ExitUnavailable},
		{"deadline", context.DeadlineExceeded, cmdutil.ExitUnavailable},
		{"connection cut", io.ErrUnexpectedEOF, cmdutil.ExitUnavailable},
		{"leader moving", kerr.NotLeaderForPartition, cmdutil.ExitUnavailable},
		{"record too large", kerr.MessageTooLarge, cmdutil.ExitFailure},
		{"interrupted", context.Canceled, cmdutil.ExitFailure},
		{"anything else", errors.New("boom"), cmdutil.ExitFailure},
	}
	for _, c := range cases {
		if got := kafkaExitCode(c.err); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}

func TestClientOptionsAcceptEveryConfiguration(t *testing.T) {
	for _, k := range []config.KafkaConfig{
		{Brokers: []string{"localhost:9092"}},
		{Brokers: []string{"a:9092", "b:9092"}, TLSEnabled: true},
		{Brokers: []string{"a:9092"}, SASLMechanism: config.SASLScramSHA256, SASLUsername: "u", SASLPassword: "p"},
		{Brokers: []string{"a:9092"}, TLSEnabled: true, SASLMechanism: config.SASLScramSHA512, SASLUsername: "u", SASLPassword: "p"},
		{Brokers: []string{"a:9092"}, TLSEnabled: true, SASLMechanism: config.SASLPlain, SASLUsername: "u", SASLPassword: "p"},
		{Brokers: []string{"a:9092"}, SASLMechanism: config.SASLOAuthBearer,
			OAuth: config.KafkaOAuthConfig{TokenURL: "https://idp.example/token", ClientID: "hub", ClientSecret: "s"}},
	} {
		opts, err := clientOptions(t.Context(), k)
		if err != nil {
			t.Errorf("%+v: %v", k, err)
			continue
		}
		client, err := kgo.NewClient(opts...)
		if err != nil {
			t.Errorf("%+v: %v", k, err)
			continue
		}
		client.Close()
	}
}

func TestReadData(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "event.json")
	if err := os.WriteFile(file, []byte(`{"from":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, arg, contentType, stdin string
		want                          string
		wantErr                       string
	}{
		{"default for JSON", "", "application/json", "", "{}", ""},
		{"default otherwise", "", "text/plain", "", "", ""},
		{"literal", `{"a":1}`, "application/json", "", `{"a":1}`, ""},
		{"stdin", "-", "application/json", `{"from":"stdin"}`, `{"from":"stdin"}`, ""},
		{"file", "@" + file, "application/json", "", `{"from":"file"}`, ""},
		{"missing file", "@" + filepath.Join(dir, "nope"), "application/json", "", "", "no such file"},
		{"@ alone", "@", "application/json", "", "", "name a file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readData(c.arg, c.contentType, strings.NewReader(c.stdin))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("err = %v, want one mentioning %q", err, c.wantErr)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Errorf("readData = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestReadDataBoundsAndReadErrors(t *testing.T) {
	endless := io.LimitReader(zeros{}, maxDataBytes+10)
	if _, err := readData("-", "text/plain", endless); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized stdin: err = %v", err)
	}
	if _, err := readData("-", "text/plain", iotest.ErrReader(errors.New("disk on fire"))); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("failing stdin: err = %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
