package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/hubctl/hubctl/pkg/client"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// A hub stand-in that knows one tenant, so the example runs anywhere.
func fakeHub() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/tenants/acme", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"acme","status":"active","created_at":"2025-06-01T12:00:00Z","updated_at":"2025-06-01T12:00:00Z"}`)
	})
	mux.HandleFunc("GET /admin/tenants/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"code":"tenant_not_found","message":"no tenant %s"}`, r.PathValue("id"))
	})
	return httptest.NewServer(mux)
}

func Example() {
	hub := fakeHub()
	defer hub.Close()

	c, err := client.New(hub.URL, client.WithToken("the-admin-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	tenant, err := c.GetTenant(context.Background(), "acme")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tenant.ID, tenant.Status)

	_, err = c.GetTenant(context.Background(), "nobody")
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Body.Code)
	}
	// Output:
	// acme active
	// 404 tenant_not_found
}

// A tenant's subscriptions, acted on with the admin token: WithTenant names
// the tenant (X-Tenant-Id) of every call that names none. A tenant API key
// needs no WithTenant.
func ExampleWithTenant() {
	c, err := client.New("https://hub.example.com", client.WithToken("the-admin-token"), client.WithTenant("acme"))
	if err != nil {
		fmt.Println(err)
		return
	}
	page, err := c.ListSubscriptions(context.Background(), "", hubapi.ListParams{Limit: 50})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sub := range page.Items {
		fmt.Println(sub.ID, sub.Name, sub.VerificationState)
	}
}

// The admin token names the tenant each call acts on; a tenant API key
// passes "" for its own, and is refused (403 forbidden) naming another.
// The client is a hubapi.ControlPlane, so code written against the
// interface runs as well in process.
func ExampleClient_ListSubscriptions() {
	c, err := client.New("https://hub.example.com", client.WithToken("the-admin-token"))
	if err != nil {
		fmt.Println(err)
		return
	}
	var hub hubapi.ControlPlane = c
	page, err := hub.ListSubscriptions(context.Background(), "acme", hubapi.ListParams{Limit: 50})
	if hubapi.ErrorCode(err) == hubapi.CodeTenantNotFound {
		fmt.Println("no tenant acme")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, sub := range page.Items {
		fmt.Println(sub.ID, sub.Name)
	}
}
