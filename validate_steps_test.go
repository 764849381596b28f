package reprise

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// goodOptions is options that validate accepts: a synthetic load of one
// request against a URL nothing listens on (nothing is sent).
func goodOptions(t *testing.T) Options {
	o := NewOptions()
	o.Model, o.URL = "m", "http://127.0.0.1:1"
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 8}
	o.Output.Dir = filepath.Join(t.TempDir(), "run")
	o.Replay.Concurrency, o.Replay.RequestCount = 1, 1
	return o
}

func fields(errs []*FieldError) []string {
	var f []string
	for _, e := range errs {
		f = append(f, e.Field)
	}
	return f
}

// TestCheckOptionsReadsNothing: the first step reports the options'
// own problems and leaves what they name alone: a calibration file, a
// tokenizer file and a Wasm adapter that do not exist are no problem
// yet, and o is not changed.
func TestCheckOptionsReadsNothing(t *testing.T) {
	o := goodOptions(t)
	o.Calibration = filepath.Join(t.TempDir(), "none.json")
	o.Tokenizer = filepath.Join(t.TempDir(), "none-tokenizer.json")
	o.Endpoint = filepath.Join(t.TempDir(), "none.wasm")
	before := o
	if errs := checkOptions(&o); len(errs) != 0 {
		t.Errorf("checkOptions: %v", fields(errs))
	}
	if o.Endpoint != before.Endpoint || o.Prompts != before.Prompts {
		t.Errorf("checkOptions changed the options")
	}
	o.Model, o.Output.Format, o.Headers, o.ExtraBody = "", "csv", []string{"no colon"}, "[1]"
	want := []string{"Model", "ExtraBody", "Headers", "Output.Format"}
	if got := fields(checkOptions(&o)); !slices.Equal(got, want) {
		t.Errorf("fields %v, want %v", got, want)
	}
}

// TestResolveInputs: the second step reads the calibration file (a
// missing one is a problem) and defaults the endpoint.
func TestResolveInputs(t *testing.T) {
	o := goodOptions(t)
	o.Calibration = filepath.Join(t.TempDir(), "none.json")
	rp := &replayPlan{}
	v := newValidation(context.Background(), &o, slog.New(slog.DiscardHandler), rp)
	v.resolveInputs()
	if got := fields(v.errs); !slices.Equal(got, []string{"Calibration"}) {
		t.Errorf("fields %v, want [Calibration]", got)
	}
	if o.Endpoint != DefaultEndpoint {
		t.Errorf("Endpoint %q, want %q", o.Endpoint, DefaultEndpoint)
	}
}

// TestResolveEngine: the third step makes the adapter and the request
// settings: an embeddings endpoint never streams, takes batches, and
// every request carries the headers and the URL's credentials.
func TestResolveEngine(t *testing.T) {
	o := goodOptions(t)
	o.Endpoint, o.BatchSize = "embeddings", 4
	o.URL = "http://u:p@127.0.0.1:1"
	o.Headers = []string{"X-Tenant: a"}
	rp := &replayPlan{}
	v := newValidation(context.Background(), &o, slog.New(slog.DiscardHandler), rp)
	v.resolveTokenizer()
	v.resolveEngine()
	if len(v.errs) != 0 {
		t.Fatalf("problems: %v", fields(v.errs))
	}
	if rp.kind == adapter.KindGenerate || rp.streaming {
		t.Errorf("kind %v, streaming %v: want embeddings, not streamed", rp.kind, rp.streaming)
	}
	want := []adapter.Header{{Name: "X-Tenant", Value: "a"}, {Name: "Authorization", Value: "Basic dTpw"}}
	if !slices.Equal(rp.engine.Header, want) || rp.engine.BaseURL != "http://127.0.0.1:1" {
		t.Errorf("headers %v, base %q", rp.engine.Header, rp.engine.BaseURL)
	}
	o.Endpoint = "chat"
	rp = &replayPlan{}
	v = newValidation(context.Background(), &o, slog.New(slog.DiscardHandler), rp)
	v.resolveTokenizer()
	v.resolveEngine()
	if got := fields(v.errs); !slices.Equal(got, []string{"BatchSize"}) {
		t.Errorf("chat with batches: fields %v, want [BatchSize]", got)
	}
}

// TestReadTraceAndBuildPlan: the last steps read a trace (streamed when
// it can be, held whole when asked) and build the plan of its rows.
func TestReadTraceAndBuildPlan(t *testing.T) {
	for _, hold := range []bool{false, true} {
		o := goodOptions(t)
		o.Synthetic, o.Replay.RequestCount = SyntheticLoad{}, 0
		o.Trace.Path, o.Trace.Hold = "traces/mooncake-sample.jsonl", hold
		rp, err := validate(context.Background(), &o, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if rp.streamed == hold || rp.plan == nil || rp.prompts == nil || rp.nRows == 0 || (rp.rows != nil) != hold {
			t.Errorf("hold %v: streamed %v, %d rows (held %d)", hold, rp.streamed, rp.nRows, len(rp.rows))
		}
		rp.close()
	}
	o := goodOptions(t)
	o.Synthetic = SyntheticLoad{ISL: 8, OSL: 8, Sessions: 2, TurnsMean: 2}
	rp := &replayPlan{pcfg: promptConfig(&o, false)}
	v := newValidation(context.Background(), &o, slog.New(slog.DiscardHandler), rp)
	v.resolveTokenizer()
	if err := buildPlan(&o, rp); err != nil {
		t.Fatal(err)
	}
	if rp.nRows != 4 || rp.plan == nil {
		t.Errorf("a shaped synthetic load of 2 sessions of 2 turns: %d rows", rp.nRows)
	}
}
