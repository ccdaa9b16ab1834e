package service

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hubctl/hubctl/internal/event"
	"github.com/hubctl/hubctl/internal/store/catalog"
	"github.com/hubctl/hubctl/internal/store/pg"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Quarantine reads the poison records ingest kept (docs/concepts.md, Verdicts).
type Quarantine struct {
	store *catalog.Store
}

// NewQuarantine returns the quarantine use cases over st.
func NewQuarantine(st *catalog.Store) *Quarantine {
	return &Quarantine{store: st}
}

// List pages through the quarantine, newest first. Each record is a
// summary of bounded size (see hubapi.QuarantineSummary); Get returns one
// whole.
func (s *Quarantine) List(ctx context.Context, p hubapi.QuarantineListParams) (hubapi.Page[hubapi.QuarantineSummary], error) {
	limit, err := pageLimit(p.Limit)
	if err != nil {
		return hubapi.Page[hubapi.QuarantineSummary]{}, err
	}
	if p.Reason != "" && !slices.Contains(event.QuarantineReasons(), event.Reason(p.Reason)) {
		// An unknown reason would match nothing, which reads as "no such
		// records" rather than as the typo it is.
		names := make([]string, 0, len(event.QuarantineReasons()))
		for _, r := range event.QuarantineReasons() {
			names = append(names, string(r))
		}
		return hubapi.Page[hubapi.QuarantineSummary]{}, invalid("reason", "invalid reason %q: use one of %s", p.Reason, strings.Join(names, ", "))
	}
	q := catalog.QuarantineQuery{Limit: limit, Reason: p.Reason, Topic: p.Topic}
	if p.Cursor != "" {
		position, err := decodeCursor(quarantineCursor, p.Cursor)
		if err != nil {
			return hubapi.Page[hubapi.QuarantineSummary]{}, err
		}
		at, id, err := parseQuarantinePosition(position)
		if err != nil {
			return hubapi.Page[hubapi.QuarantineSummary]{}, err
		}
		q.After = &catalog.QuarantinePosition{ReceivedAt: at, ID: id}
	}
	rows, more, err := s.store.ListQuarantine(ctx, q)
	if err != nil {
		return hubapi.Page[hubapi.QuarantineSummary]{}, err
	}
	return pageOf(rows, more, quarantineSummaryView, quarantineCursor, func(last catalog.QuarantineSummary) string {
		return formatQuarantinePosition(last.ReceivedAt, last.ID)
	}), nil
}

// CodeQuarantineNotFound answers a quarantine id that names no record.
const CodeQuarantineNotFound = "quarantine_not_found"

func quarantineNotFound(id string, err error) error {
	return &hubapi.NotFoundError{Code: CodeQuarantineNotFound, Message: fmt.Sprintf("quarantined record %q not found", id), Err: err}
}

// Get returns one quarantined record whole, by its id (a decimal
// integer); quarantine_not_found when there is none.
func (s *Quarantine) Get(ctx context.Context, id string) (hubapi.QuarantineItem, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n < 1 || strconv.FormatInt(n, 10) != id {
		return hubapi.QuarantineItem{}, quarantineNotFound(id, nil)
	}
	r, v, err := s.store.GetQuarantined(ctx, n)
	if errors.Is(err, pg.ErrNotFound) {
		return hubapi.QuarantineItem{}, quarantineNotFound(id, err)
	}
	if err != nil {
		return hubapi.QuarantineItem{}, err
	}
	return quarantineView(r, v), nil
}

func quarantineView(r catalog.QuarantinedRecord, v pg.ValueInfo) hubapi.QuarantineItem {
	item := hubapi.QuarantineItem{
		QuarantineOrigin: origin(r.QuarantineOrigin),
		Headers:          make([]hubapi.QuarantineHeader, len(r.Headers)),
		ValueBase64:      base64.StdEncoding.EncodeToString(r.Value),
		QuarantineValue:  valueView(v),
		ReceivedAt:       r.ReceivedAt.UTC(),
	}
	if r.Key != nil {
		key, encoding := textOrBase64(r.Key)
		item.Key, item.Encoding = &key, encoding
	}
	for i, h := range r.Headers {
		item.Headers[i] = headerView(h)
	}
	return item
}

func quarantineSummaryView(r catalog.QuarantineSummary) hubapi.QuarantineSummary {
	item := hubapi.QuarantineSummary{
		QuarantineOrigin:  origin(r.QuarantineOrigin),
		KeySize:           r.KeySize,
		Headers:           make([]hubapi.QuarantineHeader, len(r.Headers)),
		HeaderCount:       r.HeaderCount,
		ValuePrefixBase64: base64.StdEncoding.EncodeToString(r.ValuePrefix),
		QuarantineValue:   valueView(r.Value),
		ReceivedAt:        r.ReceivedAt.UTC(),
	}
	if r.KeyPrefix != nil {
		key, encoding := prefixTextOrBase64(r.KeyPrefix, r.KeySize > int64(len(r.KeyPrefix)))
		item.Key, item.Encoding = &key, encoding
	}
	for i, h := range r.Headers {
		keyCut := r.HeaderKeySizes[i] > int64(len(h.Key))
		valueCut := r.HeaderValueSizes[i] > int64(len(h.Value))
		var view hubapi.QuarantineHeader
		view.Key, view.KeyEncoding = prefixTextOrBase64(h.Key, keyCut)
		view.Value, view.Encoding = prefixTextOrBase64(h.Value, valueCut)
		view.Truncated = keyCut || valueCut
		item.Headers[i] = view
	}
	return item
}

func origin(o catalog.QuarantineOrigin) hubapi.QuarantineOrigin {
	return hubapi.QuarantineOrigin{ID: o.ID, Reason: o.Reason, Detail: o.Detail, Topic: o.Topic, Partition: o.Partition, Offset: o.Offset}
}

func valueView(v pg.ValueInfo) hubapi.QuarantineValue {
	return hubapi.QuarantineValue{ValueSize: v.Size, ValueSHA256: hex.EncodeToString(v.SHA256), ValueTruncated: v.Truncated}
}

// prefixTextOrBase64 is textOrBase64 for the first bytes of a longer
// field: a character the cut split in two is dropped rather than turning
// the whole prefix into base64.
func prefixTextOrBase64(b []byte, cut bool) (text, encoding string) {
	if cut {
		for end := len(b); end > 0 && end > len(b)-utf8.UTFMax; end-- {
			if utf8.Valid(b[:end]) {
				return string(b[:end]), ""
			}
		}
	}
	return textOrBase64(b)
}

// textOrBase64 renders b as text when it is valid UTF-8 (JSON carries any
// such string exactly), else as base64 with the encoding that says so.
func textOrBase64(b []byte) (text, encoding string) {
	if utf8.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), hubapi.EncodingBase64
}
