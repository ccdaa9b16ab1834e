package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"github.com/hubctl/hubctl/internal/backoff"
	"github.com/hubctl/hubctl/internal/cli/iostreams"
	"github.com/hubctl/hubctl/internal/observe"
)

// ANSI sequences of the live view: the alternate screen keeps the user's
// scrollback intact, and each frame is drawn from the top-left corner with
// every line and the rest of the screen cleared behind it, so it redraws in
// place without flicker.
const (
	enterAltScreen = "\x1b[?1049h\x1b[?25l"
	leaveAltScreen = "\x1b[?25h\x1b[?1049l"
	cursorHome     = "\x1b[H"
	clearLineRest  = "\x1b[K"
	clearBelow     = "\x1b[J"
)

// RunOptions configure one run of top.
type RunOptions struct {
	IO       *iostreams.IOStreams
	Source   Source
	Interval time.Duration
	// Once prints one frame (rates over Interval: two readings) and returns.
	Once bool
}

// Run shows frames until ctx ends or the user presses q, or, with Once,
// prints a single frame.
func Run(ctx context.Context, opts RunOptions) error {
	renderer := lipgloss.NewRenderer(opts.IO.Out)
	if !opts.IO.ColorEnabled() {
		renderer.SetColorProfile(termenv.Ascii)
	}
	if opts.Once {
		return runOnce(ctx, opts, renderer)
	}
	if !opts.IO.IsStdoutTTY() {
		return errors.New("the live view needs a terminal; use --once to print one frame")
	}
	return runLive(ctx, opts, renderer)
}

func runOnce(ctx context.Context, opts RunOptions, renderer *lipgloss.Renderer) error {
	first, err := opts.Source.Read(ctx)
	if err != nil {
		return err
	}
	if !backoff.Sleep(ctx, opts.Interval) {
		return ctx.Err()
	}
	second, err := opts.Source.Read(ctx)
	if err != nil {
		return err
	}
	// Heartbeats come every few seconds: until a newer one arrives the two
	// readings are the same and there is no rate to show.
	for deadline := time.Now().Add(observe.StaleAfter); !second.At.At.After(first.At.At) && time.Now().Before(deadline); {
		if !backoff.Sleep(ctx, min(opts.Interval, time.Second)) {
			return ctx.Err()
		}
		if second, err = opts.Source.Read(ctx); err != nil {
			return err
		}
	}
	_, err = io.WriteString(opts.IO.Out, Render(NewFrame(opts.Source.Name(), first, second), renderer, width(opts.IO.Out)))
	return err
}

func runLive(ctx context.Context, opts RunOptions, renderer *lipgloss.Renderer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if in, ok := opts.IO.In.(*os.File); ok && term.IsTerminal(in.Fd()) {
		// Raw mode: q is read without Enter. Ctrl-C no longer raises
		// SIGINT then, so it quits too.
		state, err := term.MakeRaw(in.Fd())
		if err == nil {
			defer term.Restore(in.Fd(), state)
		}
	}
	go readKeys(opts.IO.In, cancel)

	out := opts.IO.Out
	fmt.Fprint(out, enterAltScreen)
	defer fmt.Fprint(out, leaveAltScreen)

	// older and newer are the two latest distinct readings rates come
	// from; a source whose counters move less often than the view redraws
	// (heartbeats) keeps its last rates between them.
	var older, newer Snapshot
	var lastErr string
	for {
		cur, err := opts.Source.Read(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			// Keep the last good reading; say why this one is missing.
			lastErr = err.Error()
		} else {
			lastErr = ""
			older, newer = advance(older, newer, cur)
		}
		frame := Render(NewFrame(opts.Source.Name(), older, newer), renderer, width(out))
		footer := "q quits · refresh " + opts.Interval.String()
		if lastErr != "" {
			footer = "reading failed: " + lastErr + " · " + footer
		}
		draw(out, frame+"\n"+renderer.NewStyle().Faint(true).Render(footer))
		if !backoff.Sleep(ctx, opts.Interval) {
			return nil
		}
	}
}

// advance moves the pair of readings on by cur: a newer reading shifts
// them; one no newer than the last keeps the counters (and so the rates)
// but brings what it reads live (backlog, breakers, instances).
func advance(older, newer, cur Snapshot) (Snapshot, Snapshot) {
	if newer.At.At.IsZero() || cur.At.At.After(newer.At.At) {
		return newer, cur
	}
	live := newer
	live.Instances, live.Breakers, live.Fleet = cur.Instances, cur.Breakers, cur.Fleet
	live.At.Stats.Backlog, live.At.Stats.BreakersOpen = cur.At.Stats.Backlog, cur.At.Stats.BreakersOpen
	live.At.Stats.AutoDisabled, live.At.Stats.Lag = cur.At.Stats.AutoDisabled, cur.At.Stats.Lag
	return older, live
}

// draw writes a frame over the previous one.
func draw(out io.Writer, frame string) {
	var b strings.Builder
	b.WriteString(cursorHome)
	for _, line := range strings.Split(strings.TrimRight(frame, "\n"), "\n") {
		b.WriteString(line)
		b.WriteString(clearLineRest)
		// Raw mode does not turn \n into \r\n.
		b.WriteString("\r\n")
	}
	b.WriteString(clearBelow)
	_, _ = io.WriteString(out, b.String())
}

// readKeys cancels on q, Q, Ctrl-C or the end of input.
func readKeys(in io.Reader, cancel context.CancelFunc) {
	buf := make([]byte, 16)
	for {
		n, err := in.Read(buf)
		for _, c := range buf[:n] {
			if c == 'q' || c == 'Q' || c == 0x03 {
				cancel()
				return
			}
		}
		if err != nil {
			// Without a keyboard (stdin closed) the view runs until ctx
			// ends, as a live view under a supervisor would.
			return
		}
	}
}

// width is the terminal's width, else COLUMNS, else 100.
func width(out io.Writer) int {
	if f, ok := out.(*os.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 0 {
			return w
		}
	}
	var cols int
	if _, err := fmt.Sscan(os.Getenv("COLUMNS"), &cols); err == nil && cols > 0 {
		return cols
	}
	return 100
}
