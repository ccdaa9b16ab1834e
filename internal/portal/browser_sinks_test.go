package portal_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/hubctl/hubctl/internal/testutil/natstest"
	"github.com/hubctl/hubctl/internal/testutil/wait"
)

// saslCluster is an in-process Kafka that signs clients in with
// SCRAM-SHA-512, as a tenant's own cluster would.
type saslCluster struct {
	brokers []string
}

const (
	saslUser     = "hub-writer"
	saslPassword = "scram-password-0123456789"
)

func startSASLCluster(t *testing.T, topics ...string) *saslCluster {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topics...),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", saslUser, saslPassword))
	if err != nil {
		t.Fatalf("start kfake with SASL: %v", err)
	}
	t.Cleanup(cluster.Close)
	return &saslCluster{brokers: cluster.ListenAddrs()}
}

// waitForRecord waits until the topic holds a record, read with the
// cluster's credentials.
func (c *saslCluster) waitForRecord(t *testing.T, topic string) *kgo.Record {
	t.Helper()
	consumer, err := kgo.NewClient(kgo.SeedBrokers(c.brokers...),
		kgo.SASL(scram.Auth{User: saslUser, Pass: saslPassword}.AsSha512Mechanism()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	var got *kgo.Record
	wait.Poll{Patience: browserPatience}.Until(t, "a record on "+topic, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		consumer.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = r })
		return got != nil
	})
	return got
}

// choose picks an option of a select as a person does: the page hears
// the change.
func (p *page) choose(selector, option string) {
	p.t.Helper()
	p.do(chromedp.SetValue(chromedp.CSS(selector), option))
	value(p, chromedp.Evaluate[bool](`document.querySelector(`+strconv.Quote(selector)+`).dispatchEvent(new Event("change"))`))
}

// TestPortalSinkFormsInABrowser creates a NATS and a Kafka subscription
// with the portal's forms, edits the Kafka one without typing its SASL
// password again, and shows that the stored password still signs in: the
// probe passes and the event is produced to the new topic. The activity
// page shows the edit, made by the portal.
func TestPortalSinkFormsInABrowser(t *testing.T) {
	needTool(t, chromiumPath, "apt-get install -y chromium")
	needTool(t, "npm", "apt-get install -y npm (it fetches the pinned axe-core)")
	stream := natstest.Connect(t).NewStream(t)
	kafka := startSASLCluster(t, "orders", "invoices")
	hub := serve(t)
	p := startBrowser(t)
	p.signIn(hub.link(t, "--tenant", "acme"))

	// NATS: no login.
	p.open(hub.base + "/portal/subscriptions/new?type=nats")
	p.audit("subscription-new-nats")
	p.do(
		chromedp.SendKeys(chromedp.CSS("#name"), "orders to nats"),
		chromedp.SetValue(chromedp.CSS("#event_types"), "transaction.*"),
		chromedp.SendKeys(chromedp.CSS("#sink-url"), natstest.URL()),
		chromedp.SendKeys(chromedp.CSS("#sink-subject"), stream.Subject),
		chromedp.Click(chromedp.CSS(`#subscription-form button[type="submit"]`)),
	)
	p.waitText("h1", "orders to nats")
	// The hub verifies a new subscription at once: the stream captures
	// the subject.
	if got := p.text("#verification"); got != "active" {
		t.Errorf("the NATS subscription's verification shows %q", got)
	}

	// Kafka with a SCRAM login; the password goes in a password input.
	p.open(hub.base + "/portal/subscriptions/new?type=kafka")
	if kind := value(p, chromedp.AttributeValue(chromedp.CSS("#sink-sasl-password"), "type")).Value; kind != "password" {
		t.Errorf("the SASL password input is of type %q", kind)
	}
	p.audit("subscription-new-kafka")
	// The script shows the login's fields once a mechanism is chosen.
	const loginHidden = `document.querySelector("#sink-sasl-username").closest("fieldset").hidden`
	if !value(p, chromedp.Evaluate[bool](loginHidden)) {
		t.Error("the SASL login's fields show before a mechanism is chosen")
	}
	p.do(
		chromedp.SendKeys(chromedp.CSS("#name"), "orders to kafka"),
		chromedp.SetValue(chromedp.CSS("#event_types"), "transaction.*"),
		chromedp.SendKeys(chromedp.CSS("#sink-brokers"), strings.Join(kafka.brokers, ", ")),
		chromedp.SendKeys(chromedp.CSS("#sink-topic"), "orders and more"),
	)
	p.choose("#sink-sasl-mechanism", "SCRAM-SHA-512")
	if value(p, chromedp.Evaluate[bool](loginHidden)) {
		t.Error("the SASL login's fields stay hidden once a mechanism is chosen")
	}
	p.do(
		chromedp.SendKeys(chromedp.CSS("#sink-sasl-username"), saslUser),
		chromedp.SendKeys(chromedp.CSS("#sink-sasl-password"), saslPassword),
		chromedp.Click(chromedp.CSS(`#subscription-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#sink-topic-error")),
	)
	// The hub refuses the topic: its message and code show beside the
	// field, what was typed stays but the password.
	if got := p.text("#sink-topic-error"); !strings.Contains(got, "invalid sink") || !strings.Contains(got, "invalid_sink") {
		t.Errorf("the topic's error shows %q", got)
	}
	if typed := value(p, chromedp.Evaluate[string](`document.querySelector("#sink-sasl-password").value`)); typed != "" {
		t.Errorf("the refused form shows the password back: %q", typed)
	}
	p.audit("subscription-refused")
	p.do(
		chromedp.SetValue(chromedp.CSS("#sink-topic"), "orders"),
		chromedp.SendKeys(chromedp.CSS("#sink-sasl-password"), saslPassword),
		chromedp.Click(chromedp.CSS(`#subscription-form button[type="submit"]`)),
	)
	p.waitText("h1", "orders to kafka")
	if got := p.text("#verification"); got != "active" {
		t.Errorf("the Kafka subscription's verification shows %q", got)
	}
	if settings := p.text("#sink-settings"); !strings.Contains(settings, "****") || strings.Contains(settings, saslPassword) {
		t.Errorf("the sink's settings show:\n%s\nwant the password masked", settings)
	}
	if typed := value(p, chromedp.Evaluate[string](`document.querySelector("#sink-sasl-password").value`)); typed != "" {
		t.Errorf("the edit form holds the password %q", typed)
	}
	p.audit("subscription-kafka")

	// Edit: another name and topic, the password left empty.
	p.do(
		chromedp.SetValue(chromedp.CSS("#name"), "ledger to kafka"),
		chromedp.SetValue(chromedp.CSS("#sink-topic"), "invoices"),
		chromedp.Click(chromedp.CSS(`#subscription-form button[type="submit"]`)),
	)
	p.waitText("h1", "ledger to kafka")
	if settings := p.text("#sink-settings"); !strings.Contains(settings, "invoices") {
		t.Errorf("after the edit the sink's settings show:\n%s", settings)
	}
	// A changed sink is verified again at once: the probe signed in
	// with the stored password.
	if got := p.text("#verification"); got != "active" {
		t.Errorf("after the edit the verification shows %q", got)
	}

	// An event reaches both destinations, the Kafka one on the new topic.
	hub.produce(t, "acme")
	record := kafka.waitForRecord(t, "invoices")
	if string(record.Value) != `{"amount":1000}` {
		t.Errorf("the record produced to invoices holds %s", record.Value)
	}
	wait.Poll{Patience: browserPatience}.Until(t, "the event on the NATS stream", func() bool {
		return len(stream.Messages(t)) > 0
	})

	// The activity shows the edit, by the portal, newest first.
	p.open(hub.base + "/portal/activity")
	p.audit("activity")
	first := p.text("table.activity tbody tr")
	for _, want := range []string{"subscription_updated", "ledger to kafka", "portal", "sink"} {
		if !strings.Contains(first, want) {
			t.Errorf("the newest activity is %q, want it to hold %q", first, want)
		}
	}
	p.click(`table.activity tbody tr a[href^="/portal/subscriptions/"]`, "#verification")
	if got := p.text("h1"); got != "ledger to kafka" {
		t.Errorf("the activity's link leads to %q", got)
	}
	if recent := p.text("table.activity"); !strings.Contains(recent, "subscription_updated") || !strings.Contains(recent, "subscription_created") {
		t.Errorf("the subscription's recent activity shows:\n%s", recent)
	}
}
