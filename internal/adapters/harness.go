package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/native"
	"github.com/reprise-bench/reprise/engine/adapter/openai"
	"github.com/reprise-bench/reprise/internal/exitcode"
	"github.com/reprise-bench/reprise/wasm"
)

// TestConfig is the `adapters test` command line. The zero value is
// invalid: it needs one argument and something to do.
type TestConfig struct {
	// Args are the arguments: one adapter, a native endpoint (chat,
	// responses, ...), a template FILE.json, a FILE.wasm or the name of a
	// shipped Wasm adapter.
	Args          []string
	Fixtures      []string     // recorded responses: .http files or raw SSE bodies
	Batch         int          // events per parse call (0 = all at once)
	Model         string       // passed to the adapter's configure
	AdapterConfig string       // adapter options, a JSON object
	Build         bool         // also build a request for a sample row
	Log           *slog.Logger // for loading a Wasm adapter
}

// Validate reports every problem at once. It reads nothing but the
// fixtures' file status.
func (c TestConfig) Validate() error {
	var errs []error
	switch len(c.Args) {
	case 0:
		errs = append(errs, errors.New("missing adapter: give a .wasm file or a shipped name"))
	case 1:
	default:
		errs = append(errs, fmt.Errorf("want one adapter, got %d: %s", len(c.Args), strings.Join(c.Args, " ")))
	}
	if len(c.Fixtures) == 0 && !c.Build {
		errs = append(errs, errors.New("nothing to do: give --fixture PATH (a recorded .http response or a raw SSE body) and/or --build"))
	}
	for _, f := range c.Fixtures {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, fmt.Errorf("--fixture: %w", err))
		}
	}
	if c.Batch < 0 {
		errs = append(errs, fmt.Errorf("--batch %d: want a positive number of events (0 = all in one batch)", c.Batch))
	}
	return errors.Join(errs...)
}

// Test runs the adapter of c on its fixtures and writes to w what it did:
// with c.Build first the request it builds for a sample row, then for
// each fixture, framed the way replay frames it (wasm.Classify), the
// events with the records each produced and the final summary, and the
// adapter's error. c must be valid (see [TestConfig.Validate]). An adapter
// that does not load or configure, or a fixture that does not read, is a
// usage error (exit code 2); an adapter that fails on a fixture or the
// build is an error naming the first failure (exit code 1), after
// everything was written.
func Test(ctx context.Context, w io.Writer, c TestConfig) error {
	ts, err := loadSubject(ctx, c)
	if err != nil {
		return err
	}
	defer ts.release()
	if len(c.Fixtures) > 0 && !ts.parses {
		return exitcode.Usagef("adapter %s does not parse responses", ts.name)
	}
	var failed []string
	if c.Build {
		if err := writeBuild(w, ts); err != nil {
			failed = append(failed, "build: "+err.Error())
		}
	}
	for i, f := range c.Fixtures {
		rec, err := wasm.ReadRecording(f)
		if err != nil {
			return exitcode.UsageError(err, "a fixture is an .http recording or a raw SSE body")
		}
		before := ts.spent()
		cl, err := wasm.Classify(ts.in, uint32(i+1), rec, ts.info.Framing, c.Batch)
		fmt.Fprintf(w, "== %s: HTTP %d, %d events, adapter time %v\n", filepath.Base(f), rec.Status, len(cl.Events), ts.spent()-before)
		if werr := wasm.WriteClassified(w, cl); werr != nil {
			return werr
		}
		if err != nil {
			fmt.Fprintf(w, "adapter error: %v\n", err)
			failed = append(failed, f+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("adapter failed on %d input(s): %s", len(failed), failed[0])
	}
	return nil
}

// subject is the adapter Test runs: a native endpoint or a loaded Wasm
// module.
type subject struct {
	name    string
	info    adapter.Info
	builds  bool
	parses  bool
	in      adapter.Instance
	spent   func() time.Duration // adapter time so far
	release func()
}

// loadSubject makes the instance of c's adapter: a native endpoint, a
// template FILE.json (both configured with c.AdapterConfig as a JSON
// object of strings) or a Wasm adapter, loaded and instantiated.
func loadSubject(ctx context.Context, c TestConfig) (*subject, error) {
	cfg := &adapter.Config{Model: c.Model, Stream: true}
	n, ok := native.Lookup(c.Args[0])
	if !ok && strings.HasSuffix(c.Args[0], ".json") {
		t, err := openai.LoadTemplate(c.Args[0])
		if err != nil {
			return nil, exitcode.UsageError(err, "see docs/format/template.md")
		}
		n, ok = native.Endpoint{Name: t.Info().Name, Adapter: t}, true
	}
	if ok {
		return nativeSubject(n, cfg, c.AdapterConfig)
	}
	ad, err := wasm.Load(ctx, c.Args[0], wasm.Config{Log: c.Log, AdapterConfig: []byte(c.AdapterConfig)})
	if err != nil {
		return nil, exitcode.UsageError(err, "")
	}
	in, err := ad.Instantiate(cfg)
	if err != nil {
		ad.Close(ctx)
		return nil, exitcode.UsageError(err, "")
	}
	d := ad.Describe()
	return &subject{name: ad.Name(), info: ad.Info(), builds: d.Builds, parses: d.Parses, in: in, spent: in.Spent,
		release: func() { in.Release(); ad.Close(ctx) }}, nil
}

// nativeSubject makes an instance of the native endpoint n with cfg and
// the options in opts (a JSON object of strings, or ""), timing its
// parse calls.
func nativeSubject(n native.Endpoint, cfg *adapter.Config, opts string) (*subject, error) {
	if opts != "" {
		var o map[string]string
		if err := json.Unmarshal([]byte(opts), &o); err != nil {
			return nil, exitcode.UsageError(fmt.Errorf("--adapter-config: a native endpoint takes a JSON object of strings: %w", err), "")
		}
		cfg.Options = o
	}
	in, err := n.Adapter.NewInstance(cfg)
	if err != nil {
		return nil, exitcode.UsageError(err, "")
	}
	var spent time.Duration
	ts := &subject{name: n.Name, info: n.Adapter.Info(), builds: true, parses: true, release: func() { in.Release() }}
	ts.in = timedInstance{Instance: in, spent: &spent}
	ts.spent = func() time.Duration { return spent }
	return ts, nil
}

// timedInstance adds up the time a native instance spends parsing.
type timedInstance struct {
	adapter.Instance
	spent *time.Duration
}

// Parse is the instance's Parse, timed.
func (t timedInstance) Parse(ctx uint32, b *adapter.Batch, dst []adapter.Record) ([]adapter.Record, error) {
	t0 := time.Now()
	defer func() { *t.spent += time.Since(t0) }()
	return t.Instance.Parse(ctx, b, dst)
}

// writeBuild builds a request for a sample row and writes it to w (the
// prompt's holes marked); it returns the adapter's error.
func writeBuild(w io.Writer, ts *subject) error {
	if !ts.builds {
		fmt.Fprintf(w, "== build: adapter %s does not build requests\n", ts.name)
		return nil
	}
	bi := &adapter.BuildInput{Flags: adapter.BuildStream | adapter.BuildFirstTurn, InputTokens: 6, MaxTokens: 16,
		HashIDs: []uint64{1}, BlockSize: 16, Seed: 1, PromptText: "Tell me about prefix caching."}
	var r adapter.HTTPRequest
	if err := ts.in.Build(bi, &r); err != nil {
		fmt.Fprintf(w, "== build: adapter error: %v\n", err)
		return err
	}
	path := r.Path
	if path == "" {
		path = ts.info.Path
	}
	fmt.Fprintf(w, "== build (sample row: max_tokens 16, stream)\n%s %s\n", r.Method, path)
	for _, h := range r.Header {
		fmt.Fprintf(w, "%s: %s\n", h.Name, h.Value)
	}
	last := 0
	var body []byte
	for _, h := range r.Holes {
		body = append(body, r.Body[last:h.Offset]...)
		body = append(body, fmt.Sprintf("«prompt hole kind %d»", h.Kind)...)
		last = h.Offset
	}
	body = append(body, r.Body[last:]...)
	fmt.Fprintf(w, "\n%s\n", body)
	return nil
}
