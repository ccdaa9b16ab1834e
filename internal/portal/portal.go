// Package portal is the web portal (SPEC §10, docs/portal.md): pages
// rendered on the server from embedded templates, one more front end on
// hubapi.ControlPlane. Every page acts through ControlPlane.As(the
// session's caller), so what a session may see and change is decided where
// the API's and the CLI's requests are decided; the pages only choose what
// to show.
package portal

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hubctl/hubctl/internal/crypto"
	"github.com/hubctl/hubctl/internal/ratelimit"
	"github.com/hubctl/hubctl/pkg/hubapi"
)

// Sessions is what the portal needs of the hub: the control plane as a
// caller may use it, and sign-in by link (service.ControlPlane).
type Sessions interface {
	As(caller hubapi.Caller) hubapi.ControlPlane
	// RedeemPortalLink spends a link's token: hubapi.ErrPortalLinkInvalid
	// when it cannot be spent.
	RedeemPortalLink(ctx context.Context, token string) (cookie string, caller hubapi.Caller, expires time.Time, err error)
	// AuthenticatePortal says who a session cookie is:
	// hubapi.ErrPortalSessionInvalid when it is no live session.
	AuthenticatePortal(ctx context.Context, cookie string) (hubapi.Caller, time.Time, error)
	SignOutPortal(ctx context.Context, cookie string) error
}

// Options wire the portal to the hub.
type Options struct {
	Sessions Sessions
	// FrameAncestors are the origins allowed to frame the portal
	// (STREAMING_HUB_PORTAL_FRAME_ANCESTORS); none when empty.
	FrameAncestors []string
	Logger         *slog.Logger
	// Now is the clock of the rate limit on sign-in; time.Now when nil.
	Now func() time.Time
	// RecoverStreamAfter is how long a recover runs before its page is
	// streamed with its progress; defaultRecoverStreamAfter when zero.
	RecoverStreamAfter time.Duration
}

// defaultRecoverStreamAfter answers a short recover with its result alone,
// and shows a longer one moving soon enough that nobody wonders.
const defaultRecoverStreamAfter = 2 * time.Second

// CookieName is the session cookie's name.
const CookieName = "hubctl_portal"

// Sign-in is limited per client address: a link's token has 256 random
// bits, so the limit is not what keeps guessers out; it keeps a client
// that hammers the sign-in page from costing the database a write each
// time.
const (
	signInRate  = 0.5 // a sign-in every two seconds, sustained
	signInBurst = 10
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves /portal/.
type Handler struct {
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	pages   map[string]*template.Template
	limiter *ratelimit.Limiter
	csp     string
	frameOK bool
}

// pages are parsed once, by the first portal built: the templates are part
// of the binary, so a template that does not parse fails every test of this
// package. Not at package init: every hubctl command links the portal, and
// parsing its pages takes ~3 MB that a CLI call or a hub without the portal
// should not hold.
var pages = sync.OnceValue(mustParsePages)

// New builds the portal's handler.
func New(opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.RecoverStreamAfter <= 0 {
		opts.RecoverStreamAfter = defaultRecoverStreamAfter
	}
	h := &Handler{
		opts:    opts,
		log:     opts.Logger,
		mux:     http.NewServeMux(),
		limiter: ratelimit.New(signInRate, signInBurst, opts.Now),
		csp:     ContentSecurityPolicy(opts.FrameAncestors),
		frameOK: len(opts.FrameAncestors) > 0,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.pages = pages()
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	h.mux.Handle("GET /portal/static/", http.StripPrefix("/portal/static/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /portal/sign-in", h.signIn)
	h.mux.HandleFunc("POST /portal/sign-out", h.session(h.signOut))
	h.routes()
	return h
}

// ContentSecurityPolicy allows the portal's own scripts, styles and
// images and nothing else: no inline script, no other origin; framing only
// by the origins listed.
func ContentSecurityPolicy(frameAncestors []string) string {
	ancestors := "'none'"
	if len(frameAncestors) > 0 {
		ancestors = strings.Join(frameAncestors, " ")
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors " + ancestors
}

// ServeHTTP implements http.Handler: every answer carries the headers of
// SPEC §10.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	header := w.Header()
	header.Set("Content-Security-Policy", h.csp)
	header.Set("Referrer-Policy", "no-referrer")
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("Cache-Control", "no-store")
	if !h.frameOK {
		// frame-ancestors supersedes it where supported; older browsers
		// read only this, which cannot list origins, so it is sent only
		// when no origin may frame the portal.
		header.Set("X-Frame-Options", "DENY")
	}
	h.mux.ServeHTTP(w, r)
}

// request is one page request of a signed-in session.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	caller hubapi.Caller
	hub    hubapi.ControlPlane
	csrf   string
}

// session wraps a page: the session's cookie must be live, and a POST must
// carry the session's CSRF token.
func (h *Handler) session(page func(*request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cookie, err := r.Cookie(CookieName)
		if err != nil {
			h.renderStatus(w, r, http.StatusUnauthorized, "signed-out", nil)
			return
		}
		caller, _, err := h.opts.Sessions.AuthenticatePortal(r.Context(), cookie.Value)
		if errors.Is(err, hubapi.ErrPortalSessionInvalid) {
			clearCookie(w, r)
			h.renderStatus(w, r, http.StatusUnauthorized, "signed-out", nil)
			return
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		req := &request{w: w, r: r, caller: caller, hub: h.opts.Sessions.As(caller), csrf: csrfToken(cookie.Value)}
		if r.Method == http.MethodPost && !crypto.ConstantTimeEqual(r.PostFormValue("csrf"), req.csrf) {
			h.renderStatus(w, r, http.StatusForbidden, "error", pageError{Title: "This form has expired",
				Message: "The form did not carry this session's token. Go back, reload the page and try again."})
			return
		}
		if err := page(req); err != nil {
			h.fail(w, r, err)
		}
	}
}

// csrfToken is derived from the session's cookie, so it needs no storage
// and dies with the session; a page from another origin can read neither.
func csrfToken(cookie string) string {
	mac := hmac.New(sha256.New, []byte(cookie))
	mac.Write([]byte("hubctl portal csrf"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// signIn spends the link's token and sets the session cookie. The answer
// is a page that moves on to the portal by itself, not a redirect: the
// link usually comes from another site (a mail, a chat), and a browser
// withholds a SameSite=Strict cookie from a redirect that follows such a
// navigation, while the page's own move is same-site. Either way the
// address bar no longer holds the token.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if ok, _ := h.limiter.Allow(clientAddress(r)); !ok {
		h.renderStatus(w, r, http.StatusTooManyRequests, "error", pageError{Title: "Too many sign-ins",
			Message: "This address has tried to sign in too often. Wait a minute, then open the link again."})
		return
	}
	cookie, _, expires, err := h.opts.Sessions.RedeemPortalLink(r.Context(), r.URL.Query().Get("token"))
	if errors.Is(err, hubapi.ErrPortalLinkInvalid) {
		h.renderStatus(w, r, http.StatusForbidden, "error", pageError{Title: "This sign-in link is not valid",
			Message: "It was used already, it expired, or its tenant is inactive. Ask whoever sent it for a new link (hubctl portal)."})
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: cookie, Path: "/portal/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	h.renderStatus(w, r, http.StatusOK, "signed-in", nil)
}

func (h *Handler) signOut(req *request) error {
	if cookie, err := req.r.Cookie(CookieName); err == nil {
		if err := h.opts.Sessions.SignOutPortal(req.r.Context(), cookie.Value); err != nil {
			return err
		}
	}
	clearCookie(req.w, req.r)
	h.renderStatus(req.w, req.r, http.StatusOK, "signed-out", nil)
	return nil
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/portal/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}

// clientAddress is the peer's address without its port.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
