package synth

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

// deriveInMemory is the reference: ReadAll, Derive, Write.
func deriveInMemory(t *testing.T, path string, opts trace.Options, c DeriveConfig) ([]byte, *DeriveStats, error) {
	t.Helper()
	rows, _, err := trace.ReadAll(path, opts)
	if err != nil {
		return nil, nil, err
	}
	res, err := Derive(rows, c)
	if err != nil {
		return nil, nil, err
	}
	return encode(t, res), res.Derive, nil
}

// deriveStreamed is CanStream, then DeriveTo into a Writer.
func deriveStreamed(t *testing.T, path string, opts trace.Options, c DeriveConfig) ([]byte, *DeriveStats, bool, string) {
	t.Helper()
	ok, why, err := CanStream(path, opts, c)
	if err != nil {
		t.Fatalf("CanStream: %v", err)
	}
	if !ok {
		return nil, nil, false, why
	}
	var b bytes.Buffer
	tw, err := trace.NewWriter(&b, c.Format)
	if err != nil {
		t.Fatal(err)
	}
	st, err := DeriveTo(path, opts, c, tw.Write)
	if err != nil {
		t.Fatalf("DeriveTo: %v", err)
	}
	if err := tw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), st, true, ""
}

// writeRows writes rows as Mooncake JSONL to a file of t and returns its
// path.
func writeRows(t *testing.T, name string, res *Result) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, encode(t, res), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// timed gives every row of res a timestamp (a delay-only turn arrives at
// its predecessor's arrival plus its delay) and sorts them by it, so the
// file is in the order ReadAll returns: a multi-turn trace that streams.
func timed(res *Result) *Result {
	out := *res
	out.Rows = slices.Clone(res.Rows)
	last := map[string]time.Duration{}
	for i := range out.Rows {
		r := &out.Rows[i]
		if !r.HasOffset {
			r.Offset, r.HasOffset, r.Delay = last[r.SessionID]+r.Delay, true, 0
		}
		last[r.SessionID] = r.Offset
	}
	slices.SortStableFunc(out.Rows, func(a, b trace.Row) int { return cmp.Compare(a.Offset, b.Offset) })
	return &out
}

// TestDeriveStreamMatchesInMemory is the oracle test of the streamed
// derive: over real traces (Mooncake, Azure, Splitwise) and a generated
// multi-turn one, and random combinations of the options that stream, the
// bytes and the statistics equal those of ReadAll + Derive + Write.
func TestDeriveStreamMatchesInMemory(t *testing.T) {
	multi := mustGenerate(t, genConfig(func(c *GenerateConfig) {
		c.Sessions, c.Turns, c.TurnsStddev, c.ThinkTime = 300, 4, 2, 3*time.Second
		c.PrefixRoots, c.PrefixTokens = 3, []int{1000}
	}))
	inputs := []string{
		testfiles.Trace(t, "mooncake/conversation_trace.jsonl"),
		testfiles.Trace(t, "mooncake/synthetic_trace.jsonl"),
		testfiles.Trace(t, "azure2023/AzureLLMInferenceTrace_conv.csv"),
		testfiles.Trace(t, "splitwise/test_trace.csv"),
		writeRows(t, "multi.jsonl", timed(multi)),
	}
	r := newRNG(7, 1)
	pickF := func(xs ...float64) float64 { return xs[r.intN(len(xs))] }
	pickI := func(xs ...int) int { return xs[r.intN(len(xs))] }
	var total DeriveStats
	for _, path := range inputs {
		rows, _, err := trace.ReadAll(path, trace.Options{DropFailed: true})
		if err != nil {
			t.Fatal(err)
		}
		span := rows[len(rows)-1].Offset
		for i := range 8 {
			c := NewDeriveConfig()
			c.Speedup = pickF(1, 2, 0.5, 3.7)
			c.OutputLenMultiplier = pickF(1, 1.5, 0.3)
			c.MaxOSL = pickI(0, 0, 100)
			c.MaxISL = pickI(0, 0, 500, 2000)
			if i%2 == 1 {
				c.Window.Start = time.Duration(r.float64() * 0.5 * float64(span))
				if r.intN(2) == 0 {
					c.Window.End, c.Window.HasEnd = c.Window.Start+time.Duration(r.float64()*0.5*float64(span))+1, true
				}
			}
			name := fmt.Sprintf("%s/%d", filepath.Base(path), i)
			opts := trace.Options{DropFailed: true}
			want, wantSt, err := deriveInMemory(t, path, opts, c)
			if err != nil {
				t.Fatalf("%s: in memory: %v", name, err)
			}
			got, gotSt, ok, why := deriveStreamed(t, path, opts, c)
			if !ok {
				t.Fatalf("%s: not streamed: %s", name, why)
			}
			wantSt.CeilingBefore, wantSt.ExpectedCeiling = 0, 0
			if d := gocmp.Diff(wantSt, gotSt); d != "" {
				t.Errorf("%s %+v: stats (-in memory +streamed):\n%s", name, c, d)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %+v: %d bytes streamed, %d in memory, not the same", name, c, len(got), len(want))
			}
			total.RowsOut += gotSt.RowsOut
			total.WindowSessionsDropped += gotSt.WindowSessionsDropped
			total.WindowRowsBeyond += gotSt.WindowRowsBeyond
			total.WindowRowsBefore += gotSt.WindowRowsBefore
			total.MaxISLSessionsCut += gotSt.MaxISLSessionsCut
			total.OSLCapped += gotSt.OSLCapped
		}
	}
	// Every step was exercised, multi-turn sessions included.
	if total.RowsOut == 0 || total.WindowSessionsDropped == 0 || total.WindowRowsBeyond == 0 || total.WindowRowsBefore == 0 ||
		total.MaxISLSessionsCut == 0 || total.OSLCapped == 0 {
		t.Errorf("a step was never exercised: %+v", total)
	}
}

// TestCanStreamRefuses checks each reason a derive is read whole: the
// settings, an input out of arrival order, cumulative sessions, a window
// over a session without a timestamp on its first row; and that an invalid
// row gets ReadAll's error.
func TestCanStreamRefuses(t *testing.T) {
	plain := testfiles.Trace(t, "splitwise/test_trace.csv")
	for _, mod := range []func(c *DeriveConfig){
		func(c *DeriveConfig) { c.Sample = 0.5 },
		func(c *DeriveConfig) { c.PrefixLenMultiplier = 2 },
		func(c *DeriveConfig) { c.PromptLenMultiplier = 0.5 },
		func(c *DeriveConfig) { c.PrefixRootMultiplier = 2 },
		func(c *DeriveConfig) { c.Format = trace.FormatBailian },
	} {
		c := NewDeriveConfig()
		mod(&c)
		if ok, why, err := CanStream(plain, trace.Options{}, c); ok || err != nil || why == "" {
			t.Errorf("%+v: streams %v (%q), %v", c, ok, why, err)
		}
		if _, err := DeriveTo(plain, trace.Options{}, c, func(*trace.Row) error { return nil }); !errors.Is(err, ErrSettings) {
			t.Errorf("%+v: DeriveTo %v, want a settings error", c, err)
		}
	}
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unsorted := file("unsorted.jsonl", `{"timestamp": 10, "input_length": 5, "output_length": 2}
{"timestamp": 0, "input_length": 5, "output_length": 2}
`)
	// In timestamp order, but the delay-only turn sorts with its session.
	delayed := file("delayed.jsonl", `{"session_id": "a", "timestamp": 0, "input_length": 5, "output_length": 2}
{"session_id": "b", "timestamp": 50, "input_length": 5, "output_length": 2}
{"session_id": "a", "delay": 10, "input_length": 5, "output_length": 2}
`)
	noTime := file("notime.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 2}
{"session_id": "a", "delay": 10, "input_length": 5, "output_length": 2}
`)
	bailian := mustGenerate(t, genConfig(func(c *GenerateConfig) {
		c.Sessions, c.Turns, c.Format = 20, 3, trace.FormatBailian
	}))
	var bb bytes.Buffer
	if err := Write(&bb, bailian); err != nil {
		t.Fatal(err)
	}
	cumulative := file("bailian.jsonl", bb.String())
	windowed := NewDeriveConfig()
	windowed.Window = Window{Start: 0, End: time.Second, HasEnd: true}
	for _, tt := range []struct {
		path string
		c    DeriveConfig
		why  string
	}{
		{unsorted, NewDeriveConfig(), "not in arrival order"},
		{delayed, NewDeriveConfig(), "not in arrival order"},
		{cumulative, NewDeriveConfig(), "cumulative"},
		{noTime, windowed, "no timestamp"},
	} {
		ok, why, err := CanStream(tt.path, trace.Options{}, tt.c)
		if ok || err != nil || !strings.Contains(why, tt.why) {
			t.Errorf("%s: streams %v (%q), %v; want %q", filepath.Base(tt.path), ok, why, err, tt.why)
		}
	}
	// Without the window, the delay-only session streams, and matches.
	if _, _, ok, why := deriveStreamed(t, noTime, trace.Options{}, NewDeriveConfig()); !ok {
		t.Errorf("notime.jsonl without --window: %s", why)
	}

	bad := file("bad.jsonl", `{"timestamp": 0, "input_length": 5, "output_length": 2}
{"timestamp": 1, "input_length": "x", "output_length": 2}
`)
	_, _, want := trace.ReadAll(bad, trace.Options{})
	_, _, err := CanStream(bad, trace.Options{}, NewDeriveConfig())
	if want == nil || err == nil || err.Error() != want.Error() {
		t.Errorf("invalid row: CanStream %v, ReadAll %v", err, want)
	}
}
