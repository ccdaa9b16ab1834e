package portal_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// kafkaForm is the new-subscription form of a Kafka sink with a SASL login.
func kafkaForm(csrf, name, topic string) url.Values {
	return url.Values{"csrf": {csrf}, "type": {"kafka"}, "name": {name}, "event_types": {"*"},
		"sink.brokers": {"127.0.0.1:1"}, "sink.topic": {topic}, "sink.key": {""},
		"sink.sasl.mechanism": {"PLAIN"}, "sink.sasl.username": {"hub"}, "sink.sasl.password": {"typed-password-1"}}
}

// TestSubscriptionFormOfASinkType: the type is chosen first, by a link;
// its form marks what is required and takes credentials in password
// inputs; a refused form comes back with 400 and the hub's code and
// message beside the field, without the credential typed.
func TestSubscriptionFormOfASinkType(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	get(t, c, h.link("acme", false))

	choose := get(t, c, h.url+"/portal/subscriptions/new")
	for _, typ := range []string{"webhook", "sqs", "rabbitmq", "eventbridge", "kafka", "pubsub", "nats", "s3", "pull"} {
		if !strings.Contains(choose.body, `href="/portal/subscriptions/new?type=`+typ+`"`) {
			t.Errorf("the type chooser does not offer %s", typ)
		}
	}
	page := get(t, c, h.url+"/portal/subscriptions/new?type=kafka")
	for _, want := range []string{
		`<input type="hidden" name="type" value="kafka">`,
		`id="sink-brokers" name="sink.brokers" type="text" required`,
		`id="sink-sasl-password" name="sink.sasl.password" type="password"`,
	} {
		if !strings.Contains(page.body, want) {
			t.Errorf("the kafka form lacks %s", want)
		}
	}

	refused := post(t, c, h.url+"/portal/subscriptions", kafkaForm(csrfOf(t, page), "orders", "bad topic!"))
	if refused.status != http.StatusBadRequest {
		t.Fatalf("a bad topic answered %d:\n%s", refused.status, refused.body)
	}
	if !regexp.MustCompile(`(?s)id="sink-topic"[^>]*aria-invalid="true".*id="sink-topic-error"><strong>invalid sink: [^<]+</strong> <code>invalid_sink</code>`).MatchString(refused.body) {
		t.Errorf("the refused form does not show the hub's complaint beside the topic:\n%s", refused.body)
	}
	if strings.Contains(refused.body, "typed-password-1") {
		t.Error("the refused form shows the password typed")
	}
	if !strings.Contains(refused.body, `value="orders"`) {
		t.Error("the refused form lost the name typed")
	}
}

// TestEditKeepsTheStoredCredential: an edit that leaves a credential
// empty keeps the stored one, and the change shows in the activity, made
// by the portal.
func TestEditKeepsTheStoredCredential(t *testing.T) {
	h := startHub(t)
	c := browser(t)
	get(t, c, h.link("acme", false))
	page := get(t, c, h.url+"/portal/subscriptions/new?type=kafka")
	created := post(t, c, h.url+"/portal/subscriptions", kafkaForm(csrfOf(t, page), "orders", "orders"))
	location := created.header.Get("Location")
	if created.status != http.StatusSeeOther || !strings.HasPrefix(location, "/portal/subscriptions/") {
		t.Fatalf("create answered %d at %q:\n%s", created.status, location, created.body)
	}
	id := strings.TrimPrefix(location, "/portal/subscriptions/")

	subPage := get(t, c, h.url+location)
	if subPage.status != http.StatusOK || strings.Contains(subPage.body, "typed-password-1") ||
		!strings.Contains(subPage.body, "<dt>Password</dt><dd>****</dd>") || !strings.Contains(subPage.body, "One is stored. Leave this empty to keep it.") {
		t.Fatalf("the subscription's page answered %d:\n%s", subPage.status, subPage.body)
	}
	edit := url.Values{"csrf": {csrfOf(t, subPage)}, "name": {"orders v2"}, "event_types": {"*"}, "filter": {""},
		"sink.brokers": {"127.0.0.1:1"}, "sink.topic": {"invoices"}, "sink.sasl.mechanism": {"PLAIN"},
		"sink.sasl.username": {"hub"}, "sink.sasl.password": {""}}
	if got := post(t, c, h.url+"/portal/subscriptions/"+id+"/edit", edit); got.status != http.StatusSeeOther {
		t.Fatalf("the edit answered %d:\n%s", got.status, got.body)
	}
	sub, err := h.control.As(hubapi.Admin()).GetSubscription(context.Background(), "acme", id)
	if err != nil {
		t.Fatal(err)
	}
	sasl, _ := sub.Sink["sasl"].(map[string]any)
	if sub.Name != "orders v2" || sub.Sink["topic"] != "invoices" || sasl["password"] != hubapi.Masked {
		t.Errorf("after the edit the subscription is %q with sink %v, want the password still stored", sub.Name, sub.Sink)
	}

	// Another user name cannot take the stored password along: refused
	// beside the password field.
	edit.Set("sink.sasl.username", "someone-else")
	refused := post(t, c, h.url+"/portal/subscriptions/"+id+"/edit", edit)
	if refused.status != http.StatusBadRequest || !strings.Contains(refused.body, `id="sink-sasl-password-error"`) {
		t.Errorf("an edit to another user without a password answered %d:\n%s", refused.status, refused.body)
	}

	activity := get(t, c, h.url+"/portal/activity?subscription="+id)
	for _, want := range []string{"subscription_updated", "changed ", "subscription_created", "kafka sink", "portal", `href="/portal/subscriptions/` + id + `">orders v2</a>`} {
		if !strings.Contains(activity.body, want) {
			t.Errorf("the activity page lacks %q:\n%s", want, activity.body)
		}
	}
	if strings.Index(activity.body, "subscription_updated") > strings.Index(activity.body, "subscription_created") {
		t.Error("the activity is not newest first")
	}
	if other := get(t, c, h.url+"/portal/activity?subscription="+h.acmeSub); strings.Contains(other.body, "subscription_updated") {
		t.Errorf("another subscription's activity shows this one's:\n%s", other.body)
	}
}
