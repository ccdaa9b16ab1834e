package events_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/cli/profile"
	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/testutil/kafkatest"
)

// publishedTenant consumes the one event a command published and returns
// its tenant, checking ingest would take it and its id is the printed one.
func publishedTenant(t *testing.T, cluster *kafkatest.Cluster, r clitest.Result) string {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	rec := cluster.Consume(t, context.Background(), defaultTopic, 1)[0]
	ev, verdict, ok := event.Parse(headersOf(rec), rec.Value, event.Options{})
	if !ok {
		t.Fatalf("ingest would reject the event: %s", verdict)
	}
	if ev.ID != strings.TrimSuffix(r.Stdout, "\n") {
		t.Errorf("published %s, printed %q", ev.ID, r.Stdout)
	}
	return ev.TenantID
}

func TestProduceAndTriggerUseTheContextsBrokersAndTenant(t *testing.T) {
	for _, command := range [][]string{
		{"events", "produce", "--type", "transaction.posted"},
		{"events", "trigger", "transaction.posted"},
	} {
		t.Run(command[1], func(t *testing.T) {
			cluster := kafkatest.New(t, defaultTopic)
			env := clitest.Profile(t, profile.Context{Name: "dev", Server: "http://127.0.0.1:1", Token: "key",
				Tenant: "default", Brokers: cluster.Brokers()})
			if got := publishedTenant(t, cluster, clitest.Run(t, env, command...)); got != "default" {
				t.Errorf("tenant %q, want the context's", got)
			}
		})
	}
}

// Flag over environment over context, for the brokers and the tenant: the
// context's brokers lead nowhere, so success shows they were not used.
func TestProduceFlagsAndEnvironmentOverrideTheContext(t *testing.T) {
	// Every case consumes its event from the start of the topic, so each
	// gets a broker of its own, at the one address the cases name.
	ctxEnv := clitest.Profile(t, profile.Context{Name: "dev", Server: "http://127.0.0.1:1", Token: "key",
		Tenant: "default", Brokers: []string{"127.0.0.1:1"}})
	with := func(extra map[string]string) map[string]string {
		env := maps.Clone(ctxEnv)
		maps.Copy(env, extra)
		return env
	}
	produce := []string{"events", "produce", "--type", "transaction.posted"}
	const brokersHere = "<brokers>"
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"--brokers over the context", ctxEnv, append(produce, "--brokers", brokersHere), "default"},
		{"STREAMING_HUB_KAFKA_BROKERS over the context", with(map[string]string{"STREAMING_HUB_KAFKA_BROKERS": brokersHere}), produce, "default"},
		{"HUBCTL_TENANT over the context", with(map[string]string{"HUBCTL_TENANT": "acme"}), append(produce, "--brokers", brokersHere), "acme"},
		{"--tenant over HUBCTL_TENANT", with(map[string]string{"HUBCTL_TENANT": "acme"}), append(produce, "--brokers", brokersHere, "--tenant", "globex"), "globex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := kafkatest.New(t, defaultTopic)
			brokers := strings.Join(cluster.Brokers(), ",")
			env, args := maps.Clone(tc.env), slices.Clone(tc.args)
			for k, v := range env {
				env[k] = strings.ReplaceAll(v, brokersHere, brokers)
			}
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, brokersHere, brokers)
			}
			if got := publishedTenant(t, cluster, clitest.Run(t, env, args...)); got != tc.want {
				t.Errorf("tenant %q, want %q", got, tc.want)
			}
		})
	}
}

// Without a flag, a variable or a context to take them from, the brokers
// and the tenant are usage errors naming the flag, before Kafka is tried.
func TestProduceWithoutBrokersOrTenantNamesTheFlag(t *testing.T) {
	loginContext := clitest.Profile(t, profile.Context{Name: "prod", Server: "https://hub.example.com", Token: "key"})
	elsewhere := clitest.Profile(t, profile.Context{Name: "dev", Server: "http://127.0.0.1:1", Token: "key",
		Tenant: "default", Brokers: []string{"127.0.0.1:1"}})
	elsewhere["HUBCTL_SERVER"] = "https://hub.example.com"
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no brokers anywhere", nil, []string{"events", "produce", "--tenant", "acme", "--type", "transaction.posted"}, "pass --brokers"},
		{"a context without brokers", loginContext, []string{"events", "trigger", "transaction.posted", "--tenant", "acme"}, `context "prod" stores none`},
		{"a context without a tenant", loginContext, []string{"events", "trigger", "transaction.posted", "--brokers", "127.0.0.1:1"}, `missing --tenant (or HUBCTL_TENANT): context "prod"`},
		// HUBCTL_SERVER names another hub: the context's Kafka is not its.
		{"HUBCTL_SERVER sets the context aside", elsewhere, []string{"events", "produce", "--type", "transaction.posted"}, "pass --brokers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clitest.Run(t, tc.env, tc.args...)
			if r.Code != cmdutil.ExitUsage || !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 with %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
}
