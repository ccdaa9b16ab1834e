package portal

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// The live tail: a page whose script follows a stream (Server-Sent Events)
// of a subscription's deliveries as they are created and change. The only
// page that needs scripts.
const (
	// liveRows is how many of the latest deliveries the stream watches.
	liveRows = 20
	// liveInterval is how often the stream looks again.
	liveInterval = time.Second
	// liveStreamFor bounds one stream; the browser reconnects at once.
	// A bounded stream keeps a shutdown from waiting on it and stays
	// within the server's write timeout.
	liveStreamFor = 25 * time.Second
)

// LiveDelivery is one row of the live tail, as the stream sends it.
type LiveDelivery struct {
	ID         string    `json:"id"`
	URL        string    `json:"url"`
	EventType  string    `json:"event_type"`
	State      string    `json:"state"`
	Attempts   int       `json:"attempts"`
	LastStatus string    `json:"last_status"`
	CreatedAt  time.Time `json:"created_at"`
}

// Changed returns, oldest first, the deliveries of page (newest first, as
// the list gives them) that seen has not sent in their present state, and
// records them in seen.
func Changed(seen map[string]string, page []hubapi.Delivery) []LiveDelivery {
	var out []LiveDelivery
	for _, d := range slices.Backward(page) {
		version := d.State + "/" + strconv.Itoa(d.Attempts)
		if seen[d.ID] == version {
			continue
		}
		seen[d.ID] = version
		status := ""
		if d.LastStatus != nil {
			status = strconv.Itoa(*d.LastStatus)
		}
		out = append(out, LiveDelivery{ID: d.ID, URL: "/portal/deliveries/" + url.PathEscape(d.ID), EventType: d.EventType,
			State: d.State, Attempts: d.Attempts, LastStatus: status, CreatedAt: d.CreatedAt.UTC()})
	}
	return out
}

func (h *Handler) live(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	sub, err := req.hub.GetSubscription(req.r.Context(), "", req.r.PathValue("id"))
	if err != nil {
		return err
	}
	return h.render(req, "live", sub)
}

// liveStream sends the subscription's latest deliveries, then each one
// created or changed, until the stream's time is up or the browser leaves.
func (h *Handler) liveStream(req *request) error {
	if err := tenantOnly(req); err != nil {
		return err
	}
	ctx, id := req.r.Context(), req.r.PathValue("id")
	if _, err := req.hub.GetSubscription(ctx, "", id); err != nil {
		return err
	}
	w := req.w
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return nil // the browser left
	}
	seen := map[string]string{}
	tick := time.NewTicker(liveInterval)
	defer tick.Stop()
	end := time.NewTimer(liveStreamFor)
	defer end.Stop()
	for {
		page, err := req.hub.ListDeliveries(ctx, "", id, hubapi.DeliveryListParams{ListParams: hubapi.ListParams{Limit: liveRows}})
		if err != nil {
			// The status is sent already; the browser reconnects.
			h.log.Warn("portal: live deliveries", "error", err)
			return nil
		}
		for _, d := range Changed(seen, page.Items) {
			data, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(w, "event: delivery\ndata: %s\n\n", data); err != nil {
				return nil
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-end.C:
			return nil
		case <-tick.C:
		}
	}
}
