package service

import (
	"context"
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/store"
)

// EncodingBase64 marks a field whose bytes were not valid UTF-8 and are shown
// in standard base64 instead.
const EncodingBase64 = "base64"

// QuarantineItem is a poison record as the API and CLI show it: SPEC §6.1's
// quarantine item. Text that is valid UTF-8 is shown as it is, so operators
// can read the headers that got the record rejected; anything else is
// base64, flagged by an "encoding" beside it, so no byte is lost or altered.
type QuarantineItem struct {
	ID        int64  `json:"id"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	// Key is the record key; null when the record had none.
	Key *string `json:"key"`
	// Encoding is "base64" when Key is base64.
	Encoding    string             `json:"encoding,omitempty"`
	Headers     []QuarantineHeader `json:"headers"`
	ValueBase64 string             `json:"value_base64"`
	ReceivedAt  time.Time          `json:"received_at"`
}

// QuarantineHeader is one record header of a quarantine item.
type QuarantineHeader struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// Encoding is "base64" when Value is base64.
	Encoding string `json:"encoding,omitempty"`
	// KeyEncoding is "base64" when Key is base64. Kafka header names are
	// meant to be text, but a poison record is exactly where they may not be.
	KeyEncoding string `json:"key_encoding,omitempty"`
}

// QuarantineListParams select a page of the quarantine, newest first.
// Reason and Topic, when set, keep only records with exactly that reason
// code or topic.
type QuarantineListParams struct {
	ListParams
	Reason string
	Topic  string
}

// Quarantine reads the poison records ingest kept (SPEC §1.2).
type Quarantine struct {
	store *store.Store
}

// NewQuarantine returns the quarantine use cases over st.
func NewQuarantine(st *store.Store) *Quarantine {
	return &Quarantine{store: st}
}

// List pages through the quarantine, newest first.
func (s *Quarantine) List(ctx context.Context, p QuarantineListParams) (Page[QuarantineItem], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return Page[QuarantineItem]{}, err
	}
	q := store.QuarantineQuery{Limit: limit, Reason: p.Reason, Topic: p.Topic}
	if p.Cursor != "" {
		position, err := decodeCursor(quarantineCursor, p.Cursor)
		if err != nil {
			return Page[QuarantineItem]{}, err
		}
		at, id, err := parseQuarantinePosition(position)
		if err != nil {
			return Page[QuarantineItem]{}, err
		}
		q.After = &store.QuarantinePosition{ReceivedAt: at, ID: id}
	}
	rows, more, err := s.store.ListQuarantine(ctx, q)
	if err != nil {
		return Page[QuarantineItem]{}, err
	}
	page := Page[QuarantineItem]{Items: make([]QuarantineItem, len(rows))}
	for i, r := range rows {
		page.Items[i] = quarantineView(r)
	}
	if more {
		last := rows[len(rows)-1]
		page.NextCursor = encodeCursor(quarantineCursor, formatQuarantinePosition(last.ReceivedAt, last.ID))
	}
	return page, nil
}

func quarantineView(r store.QuarantinedRecord) QuarantineItem {
	item := QuarantineItem{
		ID:          r.ID,
		Reason:      r.Reason,
		Detail:      r.Detail,
		Topic:       r.Topic,
		Partition:   r.Partition,
		Offset:      r.Offset,
		Headers:     make([]QuarantineHeader, len(r.Headers)),
		ValueBase64: base64.StdEncoding.EncodeToString(r.Value),
		ReceivedAt:  r.ReceivedAt.UTC(),
	}
	if r.Key != nil {
		key, encoding := textOrBase64(r.Key)
		item.Key, item.Encoding = &key, encoding
	}
	for i, h := range r.Headers {
		var view QuarantineHeader
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
	return base64.StdEncoding.EncodeToString(b), EncodingBase64
}
