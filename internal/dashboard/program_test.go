package dashboard

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// counter is a snapshot source that counts its calls, each snapshot one
// more request sent than the last.
type counter struct {
	mu    sync.Mutex
	calls int64
}

func (c *counter) snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	s := fixedSnapshot()
	s.Sent = c.calls
	return s
}

func press(m *model, key string) {
	k := tea.Key{Text: key, Code: []rune(key)[0]}
	switch key {
	case "ctrl+c":
		k = tea.Key{Code: 'c', Mod: tea.ModCtrl}
	case "space":
		k = tea.Key{Code: tea.KeySpace, Text: " "}
	}
	m.Update(tea.KeyPressMsg(k))
}

// TestKeys: q and Ctrl-C each call Interrupt once a press; p and space
// pause the view (ticks take no snapshot) and resume it; after the final
// snapshot keys do nothing.
func TestKeys(t *testing.T) {
	var src counter
	presses := 0
	m := &model{cfg: Config{Snapshot: src.snapshot, Interrupt: func() { presses++ }}, w: 80, h: 24}
	press(m, "q")
	press(m, "ctrl+c")
	if presses != 2 {
		t.Fatalf("%d interrupts after q and Ctrl-C, want 2", presses)
	}
	press(m, "p")
	before := m.snap.Sent
	m.Update(tickMsg{})
	m.Update(tickMsg{})
	if m.snap.Sent != before || !m.paused {
		t.Errorf("paused view changed: sent %d, then %d", before, m.snap.Sent)
	}
	if v := ansi.Strip(m.View().Content); !strings.Contains(v, "[paused]") {
		t.Errorf("paused view does not say so:\n%s", v)
	}
	press(m, "space")
	m.Update(tickMsg{})
	if m.paused || m.snap.Sent <= before {
		t.Errorf("resumed view did not update: paused %v, sent %d (was %d)", m.paused, m.snap.Sent, before)
	}
	final := fixedSnapshot()
	final.State = Finished
	if _, cmd := m.Update(finalMsg{s: final}); cmd == nil {
		t.Error("the final snapshot does not end the program")
	}
	press(m, "q")
	if presses != 2 {
		t.Errorf("a key after the final frame interrupted the run")
	}
}

// TestResize: a size message re-lays the view out at the new size.
func TestResize(t *testing.T) {
	var src counter
	m := &model{cfg: Config{Snapshot: src.snapshot}}
	m.snap = src.snapshot()
	for _, sz := range [][2]int{{80, 24}, {132, 50}, {40, 12}, {80, 24}} {
		m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		v := m.View()
		if !v.AltScreen {
			t.Error("the view is not full-screen")
		}
		checkFits(t, v.Content, sz[0], sz[1])
		if got, want := v.Content, Render(&m.snap, sz[0], sz[1], false); got != want {
			t.Errorf("%d×%d: the view is not Render's", sz[0], sz[1])
		}
	}
}

// TestStartStop runs the program on a buffer (no terminal) and checks
// that Stop leaves the final snapshot's whole frame as the last thing
// written.
func TestStartStop(t *testing.T) {
	var src counter
	var out bytes.Buffer
	d, err := Start(Config{Snapshot: src.snapshot, Output: &syncWriter{w: &out}, Width: 80, Height: 24})
	if err != nil {
		t.Fatal(err)
	}
	final := fixedSnapshot()
	final.State = Finished
	if err := d.Stop(final); err != nil {
		t.Fatal(err)
	}
	d.Stop(final) // a second Stop does nothing
	want := Render(&final, 80, 1<<10, false) + "\n"
	if got := out.String(); !strings.HasSuffix(got, want) || strings.Count(got, want) != 1 {
		t.Errorf("output does not end with the final frame once:\n%q", ansi.Strip(got[max(0, len(got)-400):]))
	}
	if !strings.Contains(ansi.Strip(want), "[finished]") {
		t.Errorf("final frame:\n%s", ansi.Strip(want))
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
