package portal

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// commonInputs are the form's inputs beside the sink's: the API's errors
// name them as the form does.
var commonInputs = []string{"name", "event_types", "retry_schedule", "filter"}

// subscriptionForm is the create or edit form of a subscription of one
// sink type, filled, with the hub's complaint about it when it was
// refused.
type subscriptionForm struct {
	Type   sinkType
	Edit   bool
	Values url.Values
	Groups []fieldGroup
	// Errors are the hub's messages by the input they are about; Problem
	// is one about no input of the form.
	Errors  map[string]string
	Code    string
	Problem string
}

// fieldGroup is fields shown together: those that always apply, or those
// of one choice, in a fieldset of their own.
type fieldGroup struct {
	Legend string
	When   *condition
	Fields []formField
}

// formField is a sink field as the form draws it.
type formField struct {
	sinkField
	ID, Name, Value, Error, Code string
	// Stored says a credential is stored: left empty, it is kept.
	Stored bool
	// RequiredInput is the input's required attribute: fields required
	// whatever else is chosen, a credential only while none is stored.
	RequiredInput bool
}

// Requirement is what the label says of the field's being required.
func (f formField) Requirement() string {
	switch {
	case !f.Required || f.Stored:
		return ""
	case f.When != nil:
		return "required for this choice"
	}
	return "required"
}

// WhenInput and WhenValues are a conditional group's choice, for the
// script that shows only the chosen group's fields.
func (g fieldGroup) WhenInput() string  { return inputName(g.When.Path) }
func (g fieldGroup) WhenValues() string { return strings.Join(g.When.Values, " ") }

// Error is the message about a common input, "" when none.
func (f subscriptionForm) Error(input string) string { return f.Errors[input] }

// newForm fills the form of sink type t from values (posted, or a stored
// subscription's); current is the stored sink as reads show it, nil on
// create; refused is the hub's complaint about values, nil when none.
func newForm(t sinkType, values url.Values, current map[string]any, refused *hubapi.ValidationError) subscriptionForm {
	form := subscriptionForm{Type: t, Edit: current != nil, Values: values, Errors: map[string]string{}}
	if refused != nil {
		form.Code = refused.Code
		if input := errorInput(t, refused.Field, commonInputs); input != "" {
			form.Errors[input] = refused.Message
		} else {
			form.Problem = refused.Message
		}
	}
	for _, f := range t.Fields {
		name := inputName(f.Path)
		ff := formField{sinkField: f, ID: strings.NewReplacer(".", "-", "_", "-").Replace(name), Name: name,
			Error: form.Errors[name], RequiredInput: f.Required && f.When == nil}
		if ff.Error != "" {
			ff.Code = form.Code
		}
		if f.Secret() {
			ff.Stored = lookup(current, f.Path) == hubapi.Masked
			ff.RequiredInput = ff.RequiredInput && !ff.Stored
		} else {
			ff.Value = values.Get(name)
		}
		last := len(form.Groups) - 1
		if last < 0 || !sameCondition(form.Groups[last].When, f.When) {
			form.Groups = append(form.Groups, fieldGroup{When: f.When, Legend: legend(t, f.When)})
			last++
		}
		form.Groups[last].Fields = append(form.Groups[last].Fields, ff)
	}
	return form
}

func sameCondition(a, b *condition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && slices.Equal(a.Values, b.Values)
}

// legend names a conditional group: the one choice it belongs to, or the
// choice field when it belongs to several.
func legend(t sinkType, when *condition) string {
	if when == nil {
		return ""
	}
	i := slices.IndexFunc(t.Fields, func(f sinkField) bool { return f.Path == when.Path })
	if i < 0 {
		return ""
	}
	chooser := t.Fields[i]
	if len(when.Values) == 1 {
		if j := slices.IndexFunc(chooser.Choices, func(c choice) bool { return c.Value == when.Values[0] }); j >= 0 {
			return "Only for " + chooser.Label + ": " + chooser.Choices[j].Label
		}
	}
	return "Only with " + chooser.Label
}

type newSubscriptionPage struct {
	Types []sinkType
	Form  *subscriptionForm
}

// newSubscription asks for the sink type first (links, so it works
// without scripts), then shows that type's form.
func (h *Handler) newSubscription(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	t, ok := sinkTypeNamed(req.r.URL.Query().Get("type"))
	if !ok {
		return h.render(req, "subscription-types", newSubscriptionPage{Types: sinkTypes})
	}
	form := newForm(t, url.Values{"event_types": {"*"}}, nil, nil)
	return h.render(req, "subscription-new", newSubscriptionPage{Form: &form})
}

func (h *Handler) createSubscription(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	if err := req.r.ParseForm(); err != nil {
		return &hubapi.ValidationError{Field: "form", Code: hubapi.CodeInvalidRequest, Message: "The form could not be read: " + err.Error()}
	}
	posted := req.r.PostForm
	t, ok := sinkTypeNamed(posted.Get("type"))
	if !ok {
		return h.render(req, "subscription-types", newSubscriptionPage{Types: sinkTypes})
	}
	sink, err := json.Marshal(sinkObject(t, posted, nil))
	if err != nil {
		return err
	}
	in := hubapi.SubscriptionCreate{
		Name:       strings.TrimSpace(posted.Get("name")),
		Sink:       sink,
		EventTypes: splitList(posted.Get("event_types")),
	}
	if steps := splitList(posted.Get("retry_schedule")); len(steps) > 0 {
		in.RetrySchedule = steps
	}
	created, err := req.hub.CreateSubscription(req.r.Context(), "", in)
	var refused *hubapi.ValidationError
	if errors.As(err, &refused) {
		form := newForm(t, posted, nil, refused)
		return h.renderCode(req, http.StatusBadRequest, "subscription-new", newSubscriptionPage{Form: &form})
	}
	if err != nil {
		return err
	}
	if created.SigningSecret == "" {
		http.Redirect(req.w, req.r, "/portal/subscriptions/"+url.PathEscape(created.ID), http.StatusSeeOther)
		return nil
	}
	return h.render(req, "secret", createdPage{Subscription: created.Subscription, Secret: created.SigningSecret})
}

// editValues are the edit form's values for a stored subscription.
func editValues(t sinkType, sub hubapi.Subscription) url.Values {
	values := formValues(t, sub.Sink)
	values.Set("name", sub.Name)
	values.Set("event_types", strings.Join(sub.EventTypes, ", "))
	if sub.Filter != nil {
		values.Set("filter", *sub.Filter)
	}
	return values
}

// storedSinkType is the form of a stored subscription's sink type.
func storedSinkType(sub hubapi.Subscription) (sinkType, error) {
	name, _ := sub.Sink["type"].(string)
	t, ok := sinkTypeNamed(name)
	if !ok {
		return sinkType{}, errors.New("portal: a stored subscription's sink type " + name + " has no form")
	}
	return t, nil
}

// edit changes what the edit form holds: the name, the event types, the
// filter and the sink's settings; a credential left empty keeps the
// stored one. A refused change shows the form again with the hub's
// complaint beside the field it is about.
func (h *Handler) edit(req *request, id string) error {
	ctx := req.r.Context()
	sub, err := req.hub.GetSubscription(ctx, "", id)
	if err != nil {
		return err
	}
	t, err := storedSinkType(sub)
	if err != nil {
		return err
	}
	posted := req.r.PostForm
	name := strings.TrimSpace(posted.Get("name"))
	filter := strings.TrimSpace(posted.Get("filter"))
	update := hubapi.SubscriptionUpdate{Name: &name, EventTypes: splitList(posted.Get("event_types"))}
	if filter == "" {
		update.Filter = hubapi.Nullable[string]{Set: true, Null: true}
	} else {
		update.Filter = hubapi.Nullable[string]{Set: true, Value: filter}
	}
	if len(t.Fields) > 0 {
		if update.Sink, err = json.Marshal(sinkObject(t, posted, sub.Sink)); err != nil {
			return err
		}
	}
	_, err = req.hub.UpdateSubscription(ctx, "", id, update)
	var refused *hubapi.ValidationError
	if errors.As(err, &refused) {
		page, err := h.subscriptionPage(req, sub)
		if err != nil {
			return err
		}
		form := newForm(t, posted, sub.Sink, refused)
		page.Form = &form
		return h.renderCode(req, http.StatusBadRequest, "subscription", page)
	}
	if err != nil {
		return err
	}
	http.Redirect(req.w, req.r, "/portal/subscriptions/"+url.PathEscape(id), http.StatusSeeOther)
	return nil
}
