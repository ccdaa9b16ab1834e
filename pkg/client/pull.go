package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hubctl/hubctl/pkg/hubapi"
)

// ReadEvents reads one page of a pull subscription: GET /v1/events (docs/consuming.md, Pulling events).
// Reading is the ack: a read that returns events moves the subscription's
// cursor to the last of them. p.After, when not nil, reads the events
// after that seq instead of after the cursor; p.Limit 0 takes the hub's
// default.
func (c *Client) ReadEvents(ctx context.Context, tenant, subscriptionID string, p hubapi.PullParams) (hubapi.PullPage, error) {
	var out hubapi.PullPage
	q := url.Values{"subscription_id": {subscriptionID}}
	if p.Limit != 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.After != nil {
		q.Set("after", strconv.FormatInt(*p.After, 10))
	}
	err := c.on(tenant).call(ctx, http.MethodGet, "/v1/events", q, nil, &out)
	return out, err
}

// Defaults of PullOptions.
const (
	DefaultPollInterval    = 250 * time.Millisecond
	DefaultMaxPollInterval = 5 * time.Second
	DefaultDedupWindow     = 10_000
	// nonFollowRetries bounds the retries of a read that does not follow:
	// a dump should wait out a rate limit, not a hub that stays down.
	nonFollowRetries = 3
	// MaxPullLimit is the largest page GET /v1/events serves.
	MaxPullLimit = 1000
)

// PullOptions tune a Pull.
type PullOptions struct {
	// Limit is the page size; 0 takes the hub's default (100).
	Limit int
	// After starts the stream after this seq; nil starts at the
	// subscription's durable cursor.
	After *int64
	// Follow keeps polling once caught up, until the context ends;
	// otherwise Next returns io.EOF after the first short page.
	Follow bool
	// PollInterval is the wait after a short page; it doubles while polls
	// come back empty, up to MaxPollInterval, and resets when events come.
	PollInterval    time.Duration
	MaxPollInterval time.Duration
	// DedupWindow is how many recent ceIds are remembered to drop an event
	// seen again (a re-read after a lost answer, a redelivery).
	DedupWindow int
	// Retryable says whether a failed read is worth another try and after
	// how long (0: the longest poll interval); nil means Retryable, the
	// API's answers. A reader that is not an API client brings its own.
	Retryable func(err error) (wait time.Duration, retry bool)
	// Max, when positive, ends the iteration (io.EOF) after that many
	// events, following or not. Pages never ask for more events than
	// remain, so nothing past the last one returned is acked.
	Max int
	// OnRetry, when set, hears of every failed read that will be tried
	// again, before the wait: a follower against a dead hub would
	// otherwise wait in silence.
	OnRetry func(Retry)
	// GiveUpAfter, when positive, bounds how long a follower keeps
	// retrying a hub it has never once reached (no page and no API
	// answer): a wrong address fails instead of waiting forever. Once the
	// hub has answered, outages are waited out without a bound.
	GiveUpAfter time.Duration
}

// Retry describes a failed read about to be tried again.
type Retry struct {
	Err      error
	Wait     time.Duration // before the next try
	Failures int           // consecutive failed reads, this one included
	// Reached says the hub has answered at least once, now or before.
	Reached bool
}

// NeverReachedError ends a follow that gave up on a hub it never reached
// (PullOptions.GiveUpAfter). It wraps the last read's error.
type NeverReachedError struct {
	After time.Duration
	Err   error
}

func (e *NeverReachedError) Error() string {
	return "gave up after " + e.After.String() + " without reaching the hub: " + e.Err.Error()
}

func (e *NeverReachedError) Unwrap() error { return e.Err }

// PageReader reads one page of a pull subscription as GET /v1/events does:
// limit 0 is the default, a nil after reads from the durable cursor.
type PageReader func(ctx context.Context, limit int, after *int64) (hubapi.PullPage, error)

// Pull iterates over a pull subscription's events in seq order, reading
// page after page. It is not safe for concurrent use.
//
// After its first read, a Pull asks for the events after the last seq it
// received rather than after the hub's cursor. The two are the same while it
// is the only reader, and when an answer is lost on the way (the hub moved
// the cursor, the events never arrived) the retry reads them again instead of
// skipping them; the ceId window drops what was already delivered. A 429 or
// 503 is waited out for its Retry-After; when following, so is a hub that
// cannot be reached.
type Pull struct {
	read PageReader
	opts PullOptions

	position *int64 // the last seq received; nil before the first event
	buffered []hubapi.PullEvent
	caughtUp bool // the last page was short
	interval time.Duration
	seen     *idWindow

	returned int       // events handed out, for Max
	reached  bool      // the hub has answered once
	started  time.Time // the first read, for GiveUpAfter
}

// Pull returns an iterator over the events of tenant's subscription
// subscriptionID (tenant as for ReadEvents). Nothing is read until the
// first Next.
func (c *Client) Pull(tenant, subscriptionID string, opts PullOptions) *Pull {
	return NewPull(func(ctx context.Context, limit int, after *int64) (hubapi.PullPage, error) {
		return c.ReadEvents(ctx, tenant, subscriptionID, hubapi.PullParams{Limit: limit, After: after})
	}, opts)
}

// NewPull returns an iterator over the pages read returns.
func NewPull(read PageReader, opts PullOptions) *Pull {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.MaxPollInterval < opts.PollInterval {
		opts.MaxPollInterval = max(DefaultMaxPollInterval, opts.PollInterval)
	}
	if opts.DedupWindow <= 0 {
		opts.DedupWindow = DefaultDedupWindow
	}
	if opts.Retryable == nil {
		opts.Retryable = Retryable
	}
	return &Pull{read: read, opts: opts, position: opts.After,
		interval: opts.PollInterval, seen: newIDWindow(opts.DedupWindow)}
}

// Next returns the next event. Without Follow it returns io.EOF once the
// subscription is caught up; with Follow it waits for events until ctx ends,
// and then returns ctx's error. Any other error ends the iteration: an
// unknown or push subscription, bad credentials, bad options.
func (p *Pull) Next(ctx context.Context) (hubapi.PullEvent, error) {
	for {
		if p.opts.Max > 0 && p.returned >= p.opts.Max {
			return hubapi.PullEvent{}, io.EOF
		}
		for len(p.buffered) > 0 {
			e := p.buffered[0]
			p.buffered = p.buffered[1:]
			if p.seen.add(e.CEID) {
				p.returned++
				return e, nil
			}
		}
		if p.caughtUp {
			if !p.opts.Follow {
				return hubapi.PullEvent{}, io.EOF
			}
			if err := sleep(ctx, p.interval); err != nil {
				return hubapi.PullEvent{}, err
			}
		}
		if err := p.fetch(ctx); err != nil {
			return hubapi.PullEvent{}, err
		}
	}
}

// fetch reads the next page into the buffer, waiting out refusals that say
// when to come back.
func (p *Pull) fetch(ctx context.Context) error {
	if p.started.IsZero() {
		p.started = time.Now()
	}
	for failures := 1; ; failures++ {
		page, err := p.read(ctx, p.pageLimit(), p.position)
		if err == nil {
			p.reached = true
			p.take(page)
			return nil
		}
		if _, answered := errors.AsType[*Error](err); answered {
			p.reached = true
		}
		wait, retry := p.retryDelay(ctx, err, failures)
		if !retry {
			return err
		}
		if !p.reached && p.opts.GiveUpAfter > 0 {
			waited := time.Since(p.started)
			if waited >= p.opts.GiveUpAfter {
				return &NeverReachedError{After: waited.Round(time.Second), Err: err}
			}
			// The last try comes when the bound is up, not after it.
			wait = min(wait, p.opts.GiveUpAfter-waited)
		}
		if p.opts.OnRetry != nil {
			p.opts.OnRetry(Retry{Err: err, Wait: wait, Failures: failures, Reached: p.reached})
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// pageLimit is the limit of the next read: the configured page, cut to
// what Max leaves.
func (p *Pull) pageLimit() int {
	limit := p.opts.Limit
	if p.opts.Max <= 0 {
		return limit
	}
	remaining := min(p.opts.Max-p.returned, MaxPullLimit)
	if limit == 0 || limit > remaining {
		return remaining
	}
	return limit
}

// take buffers a page and decides how soon to read the next one.
func (p *Pull) take(page hubapi.PullPage) {
	p.buffered = page.Items
	if n := len(page.Items); n > 0 {
		last := page.Items[n-1].Seq
		p.position = &last
	}
	p.caughtUp = page.NextCursor == nil
	p.interval = NextPollInterval(p.interval, len(page.Items), p.opts.PollInterval, p.opts.MaxPollInterval)
}

// retryDelay says whether a failed read is worth another try, and after
// how long. An unreachable hub is waited for only when following: a dump
// pointed at the wrong address should fail at once. A read that does not
// follow gives up after a few tries.
func (p *Pull) retryDelay(ctx context.Context, err error, failures int) (time.Duration, bool) {
	if ctx.Err() != nil || !p.opts.Follow && failures > nonFollowRetries {
		return 0, false
	}
	var transport *url.Error
	if errors.As(err, &transport) && !p.opts.Follow {
		return 0, false
	}
	wait, retry := p.opts.Retryable(err)
	if wait <= 0 {
		wait = p.opts.MaxPollInterval
	}
	return wait, retry
}

// Retryable is PullOptions' default judgement of a failed read: 429 and 503
// are retried after their Retry-After (0 when they give none), and so is a
// hub that could not be reached; anything else is final.
func Retryable(err error) (wait time.Duration, retry bool) {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		refusedForNow := apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusServiceUnavailable
		return apiErr.RetryAfter, refusedForNow
	}
	var transport *url.Error
	return 0, errors.As(err, &transport) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// NextPollInterval is the wait before the poll after a page of n events:
// back to min when events came (they may keep coming), doubled up to max
// when the poll found nothing.
func NextPollInterval(current time.Duration, n int, minInterval, maxInterval time.Duration) time.Duration {
	if n > 0 {
		return minInterval
	}
	return min(max(current*2, minInterval), maxInterval)
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// idWindow remembers the last size ids added, oldest dropped first.
type idWindow struct {
	ids  map[string]struct{}
	ring []string
	next int
}

func newIDWindow(size int) *idWindow {
	return &idWindow{ids: make(map[string]struct{}, size), ring: make([]string, 0, size)}
}

// add records id and reports whether it was new to the window.
func (w *idWindow) add(id string) bool {
	if _, seen := w.ids[id]; seen {
		return false
	}
	if len(w.ring) < cap(w.ring) {
		w.ring = append(w.ring, id)
	} else {
		delete(w.ids, w.ring[w.next])
		w.ring[w.next] = id
		w.next = (w.next + 1) % len(w.ring)
	}
	w.ids[id] = struct{}{}
	return true
}
