package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// DefaultFPS is how many times a second the dashboard takes a snapshot and
// redraws, by default: often enough to watch, rarely enough that the run
// does not notice (docs/design/0018-dashboard.md measures it).
const DefaultFPS = 4

// Config configures a dashboard. Snapshot and Output are required.
type Config struct {
	// Snapshot returns the run's state now. The dashboard calls it on its
	// own goroutine, at most FPS times a second (and once per key press),
	// never concurrently with itself; it owns the returned value.
	Snapshot func() Snapshot
	// Interrupt is called on each press of q or Ctrl-C. The caller maps
	// presses to what they do (the first stops sending, the second
	// cancels the requests in flight); nil ignores them.
	Interrupt func()
	// Output is the terminal the view is drawn on (the run's stderr).
	Output io.Writer
	// Input is where keys are read from (nil: none; the view only shows).
	// A terminal is put in raw mode while the dashboard runs.
	Input io.Reader
	// FPS bounds the redraws per second (0 = DefaultFPS).
	FPS int
	// Width and Height are the screen size when Output is not a terminal
	// (tests); a terminal's own size is used otherwise, and followed when
	// it changes.
	Width, Height int
}

// Dashboard is a running dashboard: Start begins it, Stop ends it. Its
// methods are safe for concurrent use.
type Dashboard struct {
	p    *tea.Program
	m    *model
	done chan struct{}
	err  error
	once sync.Once
	out  io.Writer
}

// Start shows the dashboard on cfg.Output, in the terminal's alternate
// screen, until Stop.
func Start(cfg Config) (*Dashboard, error) {
	if cfg.Snapshot == nil || cfg.Output == nil {
		panic("BUG: dashboard.Start without Snapshot or Output")
	}
	fps := cfg.FPS
	if fps <= 0 {
		fps = DefaultFPS
	}
	m := &model{cfg: cfg, every: time.Second / time.Duration(fps), w: cfg.Width, h: cfg.Height}
	m.snap = cfg.Snapshot()
	opts := []tea.ProgramOption{tea.WithOutput(cfg.Output), tea.WithInput(cfg.Input), tea.WithFPS(fps),
		// The run's own handler turns SIGINT and SIGTERM into stopping and
		// cancelling; the dashboard must not end on them.
		tea.WithoutSignalHandler(), tea.WithContext(context.Background())}
	if cfg.Width > 0 && cfg.Height > 0 {
		opts = append(opts, tea.WithWindowSize(cfg.Width, cfg.Height))
	}
	d := &Dashboard{p: tea.NewProgram(m, opts...), m: m, done: make(chan struct{}), out: cfg.Output}
	go func() {
		defer close(d.done)
		_, err := d.p.Run()
		if err != nil && !errors.Is(err, tea.ErrProgramKilled) {
			d.err = err
		}
	}()
	return d, nil
}

// Stop shows final, leaves the alternate screen, and prints final as the
// last frame on the normal screen, where it stays above what is printed
// next (the summary). It returns the error that ended the view early, if
// one did. Stop may be called more than once; later calls do nothing.
func (d *Dashboard) Stop(final Snapshot) error {
	d.once.Do(func() {
		d.p.Send(finalMsg{s: final})
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			d.p.Kill()
			<-d.done
		}
		w, _ := d.m.size()
		if w <= 0 {
			w = MinWidth
		}
		// The whole frame, at the screen's width: every section.
		fmt.Fprintln(d.out, Render(&final, w, 1<<10, false))
	})
	return d.err
}

// model is the bubbletea model: the last snapshot and the screen.
type model struct {
	cfg   Config
	every time.Duration

	mu     sync.Mutex // guards w, h for Stop
	w, h   int
	snap   Snapshot
	paused bool
	final  bool
}

type tickMsg struct{}

type finalMsg struct{ s Snapshot }

func (m *model) size() (int, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.w, m.h
}

func (m *model) tick() tea.Cmd {
	return tea.Tick(m.every, func(time.Time) tea.Msg { return tickMsg{} })
}

// Init implements tea.Model.
func (m *model) Init() tea.Cmd { return m.tick() }

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.mu.Lock()
		m.w, m.h = msg.Width, msg.Height
		m.mu.Unlock()
	case tea.KeyPressMsg:
		if m.final {
			return m, nil
		}
		switch msg.String() {
		case "q", "ctrl+c":
			if m.cfg.Interrupt != nil {
				m.cfg.Interrupt()
			}
			m.snap = m.cfg.Snapshot() // show the new state at once
		case "p", "space":
			m.paused = !m.paused
			if !m.paused {
				m.snap = m.cfg.Snapshot()
			}
		}
	case tickMsg:
		if m.final {
			return m, nil
		}
		if !m.paused {
			m.snap = m.cfg.Snapshot()
		}
		return m, m.tick()
	case finalMsg:
		m.snap, m.final, m.paused = msg.s, true, false
		return m, tea.Quit
	}
	return m, nil
}

// View implements tea.Model.
func (m *model) View() tea.View {
	w, h := m.size()
	if w <= 0 || h <= 0 {
		w, h = MinWidth, MinHeight
	}
	v := tea.NewView(Render(&m.snap, w, h, m.paused))
	v.AltScreen = true
	return v
}

// TerminalInput opens the controlling terminal for the dashboard's keys
// (standard input may be the trace). It returns nil, and a nil close, when
// there is none.
func TerminalInput() (io.Reader, func()) {
	f, err := os.Open("/dev/tty")
	if err != nil {
		return nil, func() {}
	}
	return f, func() { f.Close() }
}
