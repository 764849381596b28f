package wasm_test

import (
	"context"
	"errors"
	"os"
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

// TestLoadErrors checks the modules rejected before a run starts: each
// error is a *LoadError that names the module once and says what failed.
func TestLoadErrors(t *testing.T) {
	notWasm := filepath.Join(t.TempDir(), "text.wasm")
	if err := os.WriteFile(notWasm, []byte("data: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec string
		cfg        wasm.Config
		want       string // the whole message
		is         error
	}{
		{"missing file", "no-such-dir/x.wasm", wasm.Config{}, "adapter no-such-dir/x.wasm: no such file", nil},
		{"unknown name", "no-such-adapter", wasm.Config{},
			"adapter no-such-adapter: unknown adapter: want a .wasm file or a shipped adapter (anthropic-messages, kserve-generate, openai-chat, tgi-generate)",
			wasm.ErrUnknownAdapter},
		{"not wasm", notWasm, wasm.Config{}, "adapter " + notWasm + `: not a WebAssembly module (the file does not start with "\0asm")`, nil},
		{"import-env", hostile("import-env"), wasm.Config{}, "adapter testdata/hostile/import-env.wasm: imports functions reprise does not provide: env.now " +
			"(allowed: reprise.{log_enabled,log,token_count,random_u64} and wasi_snapshot_preview1)", nil},
		{"abi-v2", hostile("abi-v2"), wasm.Config{},
			"adapter testdata/hostile/abi-v2.wasm: ABI version mismatch: the adapter speaks ABI v2, this reprise speaks ABI v1; upgrade reprise", wasm.ErrABIVersion},
		{"no-marker", hostile("no-marker"), wasm.Config{},
			"adapter testdata/hostile/no-marker.wasm: not a reprise adapter (no reprise_abi_v1 export)", wasm.ErrNotAdapter},
		{"missing-exports", hostile("missing-exports"), wasm.Config{}, "adapter testdata/hostile/missing-exports.wasm: missing required exports: rp_configure", nil},
		{"bad-describe", hostile("bad-describe"), wasm.Config{},
			"adapter testdata/hostile/bad-describe.wasm: rp_describe output is not a JSON object: unexpected end of JSON input", nil},
		{"pin", hostile("ok"), wasm.Config{SHA256: strings.Repeat("0", 64)}, "", nil},
		{"adapter config", hostile("ok"), wasm.Config{AdapterConfig: []byte(`[1]`)},
			"adapter testdata/hostile/ok.wasm: adapter configuration [1]: want a JSON object", nil},
		{"budget", hostile("ok"), wasm.Config{MemoryBudget: 32 << 20},
			"adapter testdata/hostile/ok.wasm: adapter memory budget too small: 32 MiB is smaller than one instance's 64 MiB limit", wasm.ErrMemoryBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wasm.Load(context.Background(), tc.spec, tc.cfg)
			le, ok := errors.AsType[*wasm.LoadError](err)
			if !ok {
				t.Fatalf("err = %v (%T), want a *wasm.LoadError", err, err)
			}
			if tc.want != "" && err.Error() != tc.want {
				t.Errorf("err = %q\nwant   %q", err, tc.want)
			}
			if n := strings.Count(err.Error(), tc.spec); n != 1 {
				t.Errorf("err = %q names %s %d times, want once", err, tc.spec, n)
			}
			if got := "adapter " + le.Source + ": " + le.Reason(); got != err.Error() {
				t.Errorf("Reason() = %q does not complete the message %q", le.Reason(), err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v does not match %v", err, tc.is)
			}
		})
	}
}

// TestConfigRejected: an adapter whose rp_configure rejects the run's
// configuration fails the first NewInstance with a *ConfigError that
// names the adapter once.
func TestConfigRejected(t *testing.T) {
	a, err := wasm.Load(context.Background(), hostile("reject-config"), wasm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	_, err = a.NewInstance(&adapter.Config{Model: "m"})
	const want = `adapter evil rejected its configuration (rp_configure): GUEST_ERROR: unsupported option "mode"`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if _, ok := errors.AsType[*wasm.ConfigError](err); !ok {
		t.Errorf("err %T is not a *wasm.ConfigError", err)
	}
	if st := a.Stats(); st.Leased != 0 {
		t.Errorf("%d modules leased after the failure", st.Leased)
	}
}
