package service

import (
	"context"
	"encoding/base64"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/store"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// QuarantineListParams select a page of the quarantine, newest first.
// Reason and Topic, when set, keep only records with exactly that reason
// code or topic.
type QuarantineListParams struct {
	ListParams
	Reason string
	Topic  string
}

// Quarantine reads the poison records ingest kept (docs/concepts.md, Verdicts).
type Quarantine struct {
	store *store.Store
}

// NewQuarantine returns the quarantine use cases over st.
func NewQuarantine(st *store.Store) *Quarantine {
	return &Quarantine{store: st}
}

// List pages through the quarantine, newest first.
func (s *Quarantine) List(ctx context.Context, p QuarantineListParams) (hubapi.Page[hubapi.QuarantineItem], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.QuarantineItem]{}, err
	}
	q := store.QuarantineQuery{Limit: limit, Reason: p.Reason, Topic: p.Topic}
	if p.Cursor != "" {
		position, err := decodeCursor(quarantineCursor, p.Cursor)
		if err != nil {
			return hubapi.Page[hubapi.QuarantineItem]{}, err
		}
		at, id, err := parseQuarantinePosition(position)
		if err != nil {
			return hubapi.Page[hubapi.QuarantineItem]{}, err
		}
		q.After = &store.QuarantinePosition{ReceivedAt: at, ID: id}
	}
	rows, more, err := s.store.ListQuarantine(ctx, q)
	if err != nil {
		return hubapi.Page[hubapi.QuarantineItem]{}, err
	}
	page := hubapi.Page[hubapi.QuarantineItem]{Items: make([]hubapi.QuarantineItem, len(rows))}
	for i, r := range rows {
		page.Items[i] = quarantineView(r)
	}
	if more {
		last := rows[len(rows)-1]
		page.NextCursor = encodeCursor(quarantineCursor, formatQuarantinePosition(last.ReceivedAt, last.ID))
	}
	return page, nil
}

func quarantineView(r store.QuarantinedRecord) hubapi.QuarantineItem {
	item := hubapi.QuarantineItem{
		ID:          r.ID,
		Reason:      r.Reason,
		Detail:      r.Detail,
		Topic:       r.Topic,
		Partition:   r.Partition,
		Offset:      r.Offset,
		Headers:     make([]hubapi.QuarantineHeader, len(r.Headers)),
		ValueBase64: base64.StdEncoding.EncodeToString(r.Value),
		ReceivedAt:  r.ReceivedAt.UTC(),
	}
	if r.Key != nil {
		key, encoding := textOrBase64(r.Key)
		item.Key, item.Encoding = &key, encoding
	}
	for i, h := range r.Headers {
		var view hubapi.QuarantineHeader
		view.Key, view.KeyEncoding = textOrBase64(h.Key)
		view.Value, view.Encoding = textOrBase64(h.Value)
		item.Headers[i] = view
	}
	return item
}

// textOrBase64 renders b as text when it is valid UTF-8 (JSON carries any
// such string exactly), else as base64 with the encoding that says so.
func textOrBase64(b []byte) (text, encoding string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), hubapi.EncodingBase64
}
