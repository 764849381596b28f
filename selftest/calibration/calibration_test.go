package calibration

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
)

func testFile(host string, created time.Time) *File {
	return &File{Version: Version, Host: hostinfo.Host{Hostname: host, CPUs: 2}, Created: created, MaxErrorMS: 1,
		Settings:   Settings{Kind: "streams", Streams: 64, TTFTMS: 20, ITLMS: 10, ISL: 64, OSL: 32},
		Steps:      []Step{{Level: 8, Load: summary.Load{Streams: 7.5, EventsPerSec: 700, RequestsPerSec: 20}, Within: true}},
		SafeLoad:   &summary.Load{Streams: 7.5, EventsPerSec: 700, RequestsPerSec: 20},
		SafeErrors: map[string]summary.ErrorBar{TTFT: {P50: 0.01, P99: 0.2}},
		Limit:      Limit{Kind: "none", Advice: []string{}}}
}

// TestWriteRead: a written file reads back the same, and applies its safe
// load and errors.
func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "c.json")
	f := testFile("h", time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	g, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f, g); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
	a := g.Applied(path)
	if a.File != path || a.SafeLoad.Streams != 7.5 || a.Errors[TTFT].P99 != 0.2 || a.MaxErrorMS != 1 {
		t.Errorf("applied %+v", a)
	}
}

// TestParseErrors: a bad file names the file, the key and what to do.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"version":2,"max_error_ms":1}`, "calibration c.json: version: 2: this reprise reads version 1; run reprise selftest again"},
		{`{"version":1,"max_error_ms":0}`, "calibration c.json: max_error_ms: 0: must be positive"},
		{`{"version":1,"max_error_ms":"x"}`, "calibration c.json: max_error_ms: want a float64"},
		{`{"version":1,"max_error_ms":1,"safe_load":{"streams":-1}}`, "calibration c.json: safe_load: negative load"},
		{`{"version":1`, "calibration c.json: unexpected end of JSON input (run reprise selftest to write a new one)"},
	} {
		_, err := Parse([]byte(c.in), "c.json")
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestAuto: the last calibration of this host applies while it is
// recent; an old one, another host's or none does not.
func TestAuto(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir()) // macOS's cache dir
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if _, _, err := Auto(now); !errors.Is(err, ErrNone) {
		t.Fatalf("no file: %v, want ErrNone", err)
	}
	path, err := DefaultPath()
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, c := range []struct {
		name  string
		f     *File
		apply bool
	}{
		{"recent", testFile(host, now.Add(-time.Hour)), true},
		{"old", testFile(host, now.Add(-MaxAge-time.Hour)), false},
		{"other host", testFile(host+"x", now.Add(-time.Hour)), false},
	} {
		if err := c.f.Write(path); err != nil {
			t.Fatal(err)
		}
		f, p, err := Auto(now)
		if c.apply && (err != nil || f == nil || p != path) || !c.apply && !errors.Is(err, ErrNone) {
			t.Errorf("%s: %v %q %v", c.name, f != nil, p, err)
		}
	}
	if err := os.WriteFile(path, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Auto(now); err == nil || errors.Is(err, ErrNone) || !strings.Contains(err.Error(), path) {
		t.Errorf("broken file: %v, want an error naming it", err)
	}
}

// FuzzParse: Parse never panics, and a file it accepts, written again,
// reads back to the same bytes.
func FuzzParse(f *testing.F) {
	b, _ := json.Marshal(testFile("h", time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)))
	f.Add(b)
	f.Add([]byte(`{"version":1,"max_error_ms":1,"safe_load":null,"created":"2026-11-25T10:00:00+01:00"}`))
	f.Add([]byte(`{"version":1,"max_error_ms":1e308,"safe_errors":{"x":{"p50_ms":-1}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		g, err := Parse(in, "f")
		if err != nil {
			if _, ok := errors.AsType[*Error](err); !ok {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		once, err := json.Marshal(g)
		if err != nil {
			return // a time outside JSON's range: Write reports it
		}
		h, err := Parse(once, "f")
		if err != nil {
			t.Fatalf("an accepted file written again does not read back: %v", err)
		}
		twice, _ := json.Marshal(h)
		if string(once) != string(twice) {
			t.Fatalf("round trip changed the file:\n%s\n%s", once, twice)
		}
	})
}
