package wasm_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/wasm"
)

func hostile(name string) string { return filepath.Join("testdata", "hostile", name+".wasm") }

// TestHostileGuests feeds each misbehaving guest a bad batch (data
// starting with "!") and checks for a clear per-request *AdapterError,
// then a good batch on the same Instance to prove the run can continue.
func TestHostileGuests(t *testing.T) {
	cases := []struct {
		name     string
		want     string // in the error message
		replaced bool   // the instance was discarded
		bigEvent bool   // the bad batch needs a > 64 KiB event
		timeout  time.Duration
	}{
		{name: "loop", want: "exceeded the 100ms call deadline", replaced: true},
		// Growing to 64 MiB copies memory repeatedly: allow it time to hit the
		// limit rather than the deadline.
		{name: "alloc", want: "trap: ", replaced: true, timeout: 10 * time.Second},
		{name: "trap", want: "unreachable", replaced: true},
		{name: "oob-load", want: "out of bounds memory access", replaced: true},
		{name: "oob-scratch", want: "lies outside the", bigEvent: true},
		{name: "huge-output", want: "more than the"},
		{name: "many-records", want: "100000 records for 1 events"},
		{name: "bad-event-index", want: "record 0 for event 99, outside the batch"},
		{name: "guest-error", want: "GUEST_ERROR: boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			timeout := 100 * time.Millisecond
			if tc.timeout > 0 {
				timeout = tc.timeout
			}
			a, err := wasm.Load(context.Background(), hostile(tc.name), wasm.Config{Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close(context.Background())
			if !a.Interruptible() {
				t.Fatal("a module loaded from a file must be interruptible by default")
			}
			in, err := a.Instantiate(&adapter.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer in.Release()
			bad := []byte("!bad")
			if tc.bigEvent {
				bad = append(bad, make([]byte, 100<<10)...)
			}
			run := func(data []byte) error {
				if err := in.Open(1, adapter.OpenStream); err != nil {
					return err
				}
				_, perr := in.Parse(1, &adapter.Batch{Events: []adapter.Event{{Data: data}}, Flags: adapter.BatchEndOfStream}, nil)
				var fin adapter.Final
				cerr := in.Close(1, &fin)
				if perr != nil {
					return perr
				}
				return cerr
			}
			start := time.Now()
			err = run(bad)
			if time.Since(start) > timeout+5*time.Second {
				t.Errorf("the bad request took %v", time.Since(start))
			}
			ae, ok := errors.AsType[*wasm.AdapterError](err)
			if !ok {
				t.Fatalf("error %v (%T): want *wasm.AdapterError", err, err)
			}
			if !strings.Contains(ae.Error(), tc.want) {
				t.Errorf("error %q: want it to contain %q", ae.Error(), tc.want)
			}
			if ae.Replaced != tc.replaced {
				t.Errorf("Replaced = %v, want %v", ae.Replaced, tc.replaced)
			}
			for i := range 3 {
				if err := run([]byte(`{"ok":true}`)); err != nil {
					t.Fatalf("good request %d after the failure: %v", i, err)
				}
			}
		})
	}
}

// TestHostileBuild checks a builder asking for an absurd output buffer.
func TestHostileBuild(t *testing.T) {
	a, err := wasm.Load(context.Background(), hostile("grow-huge"), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	in, err := a.Instantiate(&adapter.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()
	var r adapter.HTTPRequest
	err = in.Build(&adapter.BuildInput{}, &r)
	if err == nil || !strings.Contains(err.Error(), "exceeds the 16777216-byte limit") {
		t.Fatalf("err = %v, want the output limit", err)
	}
}

// TestLoadErrors checks the modules rejected before a run starts.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"import-env", "imports functions reprise does not provide: env.now"},
		{"abi-v2", "adapter speaks ABI v2, this reprise speaks ABI v1; upgrade reprise"},
		{"no-marker", "not a reprise adapter (no reprise_abi_v1 export)"},
		{"missing-exports", "missing required exports: rp_configure"},
		{"bad-describe", "describe output is not a JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wasm.Load(context.Background(), hostile(tc.name), wasm.Config{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.name+".wasm") {
				t.Errorf("err = %v: want the file name in it", err)
			}
		})
	}
	if _, err := wasm.Load(context.Background(), hostile("abi-v2"), wasm.Config{}); !errors.Is(err, wasm.ErrABIVersion) {
		t.Errorf("abi-v2: %v does not match ErrABIVersion", err)
	}
	if _, err := wasm.Load(context.Background(), "no-such-adapter", wasm.Config{}); err == nil || !strings.Contains(err.Error(), "openai-chat") {
		t.Errorf("unknown name: %v, want the list of shipped adapters", err)
	}
	if _, err := wasm.Load(context.Background(), hostile("ok"), wasm.Config{SHA256: strings.Repeat("0", 64)}); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Errorf("pin mismatch: %v", err)
	}
	if _, err := wasm.Load(context.Background(), hostile("ok"), wasm.Config{AdapterConfig: []byte(`[1]`)}); err == nil {
		t.Errorf("--adapter-config [1] accepted")
	}
}
