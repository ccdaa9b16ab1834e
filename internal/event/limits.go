package event

import "strconv"

const (
	// DefaultMaxHeaderCount is STREAMING_HUB_MAX_HEADER_COUNT's default. A
	// CloudEvent carries at most 15 attributes of its own; the rest is room
	// for trace context and extensions.
	DefaultMaxHeaderCount = 64
	// DefaultMaxHeaderBytes is STREAMING_HUB_MAX_HEADER_BYTES's default
	// (64 KiB): every header's name and value together.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxAttributeBytes is STREAMING_HUB_MAX_ATTRIBUTE_BYTES's default
	// (4 KiB): the longest value of one attribute. W3C tracestate, the
	// longest standard one, stays well under 1 KiB.
	DefaultMaxAttributeBytes = 4 << 10
)

const (
	// ReasonHeadersTooLarge is rule 0: the record has more headers, or more
	// header bytes, than the configured maximum.
	ReasonHeadersTooLarge Reason = "headers_too_large"
	// ReasonAttributeTooLarge is rule 0: an attribute (a ce- header or
	// content-type) is longer than the configured maximum.
	ReasonAttributeTooLarge Reason = "attribute_too_large"
)

// positiveOr is v, or def when v is not positive: the zero Options select
// every default.
func positiveOr(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func (o Options) maxHeaderCount() int { return positiveOr(o.MaxHeaderCount, DefaultMaxHeaderCount) }

func (o Options) maxHeaderBytes() int { return positiveOr(o.MaxHeaderBytes, DefaultMaxHeaderBytes) }

func (o Options) maxAttributeBytes() int {
	return positiveOr(o.MaxAttributeBytes, DefaultMaxAttributeBytes)
}

// checkBounds is rule 0, applied before any other so that what a record
// costs to judge, store and deliver is bounded whatever its producer sent:
// first the header count, then the header bytes (names and values), then
// each attribute's length in record order. Plain headers (neither ce- nor
// content-type) are bounded by the header bytes only: they are not
// attributes, and a long one is not this record's business beyond its cost.
func checkBounds(headers []Header, opts Options) (Verdict, bool) {
	if limit := opts.maxHeaderCount(); len(headers) > limit {
		return quarantine(ReasonHeadersTooLarge,
			"record has "+strconv.Itoa(len(headers))+" headers, the limit is "+strconv.Itoa(limit)), false
	}
	total := 0
	for _, h := range headers {
		total += len(h.Key) + len(h.Value)
	}
	if limit := opts.maxHeaderBytes(); total > limit {
		return quarantine(ReasonHeadersTooLarge,
			"headers are "+strconv.Itoa(total)+" bytes, the limit is "+strconv.Itoa(limit)), false
	}
	limit := opts.maxAttributeBytes()
	for _, h := range headers {
		if len(h.Value) <= limit {
			continue
		}
		if kind, _, _ := classifyHeader(h.Key); kind != headerPlain {
			return quarantine(ReasonAttributeTooLarge, "header "+quote(h.Key)+" is "+
				strconv.Itoa(len(h.Value))+" bytes, the limit for an attribute is "+strconv.Itoa(limit)), false
		}
	}
	return Verdict{}, true
}

// MaxValueBytes is the largest value accepted: MaxEventBytes or its default.
func (o Options) MaxValueBytes() int { return o.maxEventBytes() }

// HeaderLimits are the header count and header bytes rule 0 allows: the
// options' or their defaults.
func (o Options) HeaderLimits() (count, bytes int) { return o.maxHeaderCount(), o.maxHeaderBytes() }
