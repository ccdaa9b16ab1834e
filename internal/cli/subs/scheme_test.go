package subs_test

import (
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/cmdutil"
)

// TestSignatureSchemeInEveryMode: --signature-scheme on create and update,
// the scheme on reads, a switch printing its new secret once, and the
// refusals, the same directly and through the API.
func TestSignatureSchemeInEveryMode(t *testing.T) {
	steps := []step{
		{args: []string{"subs", "create", "--name", "std", "--type", "webhook", "--url", "{receiver}", "--signature-scheme", "standard-webhooks", "-o", "json"},
			save: "hook", wantStdout: []string{`"signature_scheme":"standard-webhooks"`, `"signing_secret":"(set)"`, `"verification_state":"active"`},
			wantStderr: "will not be shown again"},
		{args: []string{"subs", "get", "{hook}", "-o", "json"}, wantStdout: []string{`"signature_scheme":"standard-webhooks"`}},
		{args: []string{"subs", "update", "{hook}", "--signature-scheme", "lerian", "-o", "json"},
			wantStdout: []string{`"signature_scheme":"lerian"`, `"signing_secret":"(set)"`, `"previous_secret_expires_at":"(set)"`},
			wantStderr: "will not be shown again"},
		{args: []string{"subs", "update", "{hook}", "--signature-scheme", "standard-webhooks", "--signing-secret", "whsec_YS1jYWxsZXItY2hvc2VuLWtleS0yNGIh", "-o", "json"},
			wantStdout: []string{`"signature_scheme":"standard-webhooks"`}},
		{args: []string{"subs", "rotate-secret", "{hook}", "--signing-secret", "a-long-enough-lerian-style-secret"},
			wantCode: cmdutil.ExitFailure, wantStderr: "standard base64", stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "pull", "--signature-scheme", "standard-webhooks"},
			wantCode: cmdutil.ExitFailure, wantStderr: "signature_scheme", stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "webhook", "--url", "{receiver}", "--signature-scheme", "svix"},
			wantCode: cmdutil.ExitFailure, wantStderr: "signature_scheme", stdoutEmpty: true},
		{args: []string{"subs", "create", "--name", "bad", "--type", "webhook", "--url", "{receiver}", "--signature-scheme", "standard-webhooks",
			"--signing-secret", "a-long-enough-lerian-style-secret"}, wantCode: cmdutil.ExitFailure, wantStderr: "standard base64", stdoutEmpty: true},
	}
	rcv := newReceiver(t)
	for _, m := range modes(t) {
		outcomes := runSteps(t, m.env, rcv, steps)
		for i, s := range steps {
			got := outcomes[i]
			if got.code != s.wantCode {
				t.Errorf("%s: %v: exit %d, want %d (stderr %q)", m.name, s.args, got.code, s.wantCode, got.stderr)
			}
			for _, fragment := range s.wantStdout {
				if !strings.Contains(got.stdout, fragment) {
					t.Errorf("%s: %v: output lacks %s:\n%s", m.name, s.args, fragment, got.stdout)
				}
			}
			if !strings.Contains(got.stderr, s.wantStderr) {
				t.Errorf("%s: %v: stderr %q lacks %q", m.name, s.args, got.stderr, s.wantStderr)
			}
			if s.stdoutEmpty && got.stdout != "" {
				t.Errorf("%s: %v: printed %s", m.name, s.args, got.stdout)
			}
		}
		// The switch that brought its own secret prints none.
		if strings.Contains(outcomes[3].stderr, "will not be shown again") {
			t.Errorf("%s: a switch to the caller's secret printed a secret", m.name)
		}
	}
}
