// Package calibration reads and writes calibration files: what `reprise
// selftest` measured about how precisely this machine can time an LLM
// server's responses, and up to what load (docs/format/calibration.md).
// `reprise replay` applies one (summary.Calibration) to put error bars
// beside its latencies and to flag runs past the calibrated safe load.
package calibration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/selftest/hostinfo"
)

// Version is the calibration file format's version (the "version" key).
const Version = 1

// MaxAge is how old the last calibration of this host may be for `reprise
// replay` to apply it without being told to (--calibration auto).
const MaxAge = 7 * 24 * time.Hour

// The metric tags a calibration has errors for.
const (
	TTFT = "time_to_first_token"
	ITL  = "inter_token_latency"
	E2E  = "request_latency"
)

// Tags lists the metric tags of a calibration's errors, in table order.
var Tags = []string{TTFT, ITL, E2E}

// ErrNone is returned by [Auto] when there is no calibration of this host
// recent enough to apply.
var ErrNone = errors.New("no recent calibration of this host")

// File is a calibration file. Times are ms, rates per second.
type File struct {
	Version        int           `json:"version"`
	Host           hostinfo.Host `json:"host"`
	Created        time.Time     `json:"created"`
	RepriseVersion string        `json:"reprise_version"`
	// MaxErrorMS is the bound: a load is safe when its TTFT, ITL and E2E
	// errors' p99 all stay under it.
	MaxErrorMS float64 `json:"max_error_ms"`
	// Settings are the load that was stepped up.
	Settings Settings `json:"settings"`
	// Timer is the dispatcher's timer quality (as in the manifest's
	// preflight), in ms.
	Timer Timer `json:"timer"`
	// Steps are the loads measured, in order.
	Steps []Step `json:"steps"`
	// SafeLevel is the setting (Step.Level) of the largest step within
	// the bound, SafeLoad its load and SafeErrors its errors; 0 and nil
	// when even the first step was not.
	SafeLevel  float64                     `json:"safe_level"`
	SafeLoad   *summary.Load               `json:"safe_load"`
	SafeErrors map[string]summary.ErrorBar `json:"safe_errors"`
	// Limit says what limited the machine, and what to change.
	Limit Limit `json:"limit"`
	// CoLocated is the case of a server under test on the same machine,
	// when measured.
	CoLocated *CoLocated `json:"co_located,omitempty"`
}

// Settings describe the stepped load.
type Settings struct {
	// Kind is what was stepped: "streams", "rate" or "trace".
	Kind    string  `json:"kind"`
	Streams int     `json:"streams,omitempty"`
	Rate    float64 `json:"request_rate,omitempty"`
	Trace   string  `json:"trace,omitempty"`
	Speedup float64 `json:"speedup,omitempty"`
	TTFTMS  float64 `json:"ttft_ms"`
	ITLMS   float64 `json:"itl_ms"`
	ISL     int     `json:"isl"`
	OSL     int     `json:"osl"`
}

// Timer is a timer preflight's result in ms.
type Timer struct {
	Primitive string  `json:"primitive"`
	P50MS     float64 `json:"p50_ms"`
	P99MS     float64 `json:"p99_ms"`
	MaxMS     float64 `json:"max_ms"`
}

// Step is one load and what was measured at it.
type Step struct {
	// Level is the stepped setting: streams, requests/s or speedup.
	Level float64 `json:"level"`
	// Load is what the client was given, from the run's summary.
	Load summary.Load `json:"load"`
	// Errors are the client's timing errors against the server's log,
	// keyed by metric tag (TTFT, ITL, E2E).
	Errors map[string]summary.ErrorBar `json:"errors"`
	// Requests were compared with the log; Problems counts those that
	// failed or disagreed with it.
	Requests int `json:"requests"`
	Problems int `json:"problems"`
	// LatenessP99MS is the schedule lateness p99, ReadLagP99MS the client
	// read lag p99, ServerLatenessP99MS the mock server's own lateness
	// p99 (its writes after their due time).
	LatenessP99MS       float64 `json:"schedule_lateness_p99_ms"`
	ReadLagP99MS        float64 `json:"client_read_lag_p99_ms"`
	ServerLatenessP99MS float64 `json:"server_lateness_p99_ms"`
	// Client CPU (getrusage) per response event and per request, µs;
	// ClientCores and ServerCores are CPU time over wall time; SysShare
	// the kernel's share of the client's CPU (networking).
	ClientCPUPerEventUS   float64 `json:"client_cpu_per_event_us"`
	ClientCPUPerRequestUS float64 `json:"client_cpu_per_request_us"`
	ClientCores           float64 `json:"client_cores"`
	ServerCores           float64 `json:"server_cores"`
	SysShare              float64 `json:"client_sys_share"`
	// Quality is the run's own measurement_quality verdict.
	Quality string `json:"measurement_quality"`
	// Within: every error p99 under the bound and no problem.
	Within bool `json:"within"`
}

// Limit is what limits the machine: Kind is "none", "cpu", "timer",
// "loopback" or "scheduling"; Detail the numbers; Advice what to change.
type Limit struct {
	Kind   string   `json:"kind"`
	Detail string   `json:"detail"`
	Advice []string `json:"advice"`
}

// CoLocated is the load of the safe step measured with a server that
// uses the CPU as a real one on the same machine would, with the client as
// it runs by default and with the change --nice makes.
type CoLocated struct {
	// CPUPerTokenUS is the server's work per token (µs).
	CPUPerTokenUS float64 `json:"cpu_per_token_us"`
	Default       Step    `json:"default"`
	Niced         Step    `json:"niced"`
	// NiceHow says what the second run changed: "client at nice -20", or
	// "server at nice 10" where the client may not lower its nice value.
	NiceHow string `json:"nice_how"`
}

// Applied returns what a run applies of f read from path.
func (f *File) Applied(path string) *summary.Calibration {
	if f.SafeLoad == nil {
		return &summary.Calibration{File: path, Host: f.Host.Hostname, Created: f.Created, MaxErrorMS: f.MaxErrorMS,
			Errors: map[string]summary.ErrorBar{}}
	}
	return &summary.Calibration{File: path, Host: f.Host.Hostname, Created: f.Created, MaxErrorMS: f.MaxErrorMS,
		SafeLoad: *f.SafeLoad, Errors: f.SafeErrors}
}

// Error is a calibration file that cannot be used: its path, the key at
// fault ("" for the file as a whole) and why.
type Error struct {
	Path, Field string
	Err         error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("calibration %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("calibration %s: %s: %v", e.Path, e.Field, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Read reads and checks the calibration file at path.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse decodes a calibration file's bytes; path names it in errors.
// Unknown keys are ignored (a newer reprise may add some within a
// version).
func Parse(b []byte, path string) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, &Error{Path: path, Field: te.Field, Err: fmt.Errorf("want a %s", te.Type)}
		}
		return nil, &Error{Path: path, Err: fmt.Errorf("%w (run reprise selftest to write a new one)", err)}
	}
	if f.Version != Version {
		return nil, &Error{Path: path, Field: "version", Err: fmt.Errorf("%d: this reprise reads version %d; run reprise selftest again", f.Version, Version)}
	}
	if !(f.MaxErrorMS > 0) {
		return nil, &Error{Path: path, Field: "max_error_ms", Err: fmt.Errorf("%v: must be positive", f.MaxErrorMS)}
	}
	if l := f.SafeLoad; l != nil && (l.Streams < 0 || l.EventsPerSec < 0 || l.RequestsPerSec < 0) {
		return nil, &Error{Path: path, Field: "safe_load", Err: errors.New("negative load")}
	}
	for k, e := range f.SafeErrors {
		if e.P50 < 0 || e.P99 < 0 {
			return nil, &Error{Path: path, Field: "safe_errors." + k, Err: errors.New("negative error")}
		}
	}
	return &f, nil
}

// Write writes f to path (a new file, renamed into place), creating its
// directory.
func (f *File) Write(path string) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// DefaultPath is where this host's calibration is kept: the user's cache
// directory, reprise/calibration-<host name>.json.
func DefaultPath() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	host, _ := os.Hostname()
	return filepath.Join(dir, "reprise", "calibration-"+safe(host)+".json"), nil
}

// Auto returns this host's calibration at [DefaultPath] and its path when
// it was written on this host less than [MaxAge] before now; [ErrNone]
// when there is none (or it is older, or of another host); another error
// when the file is there but unreadable.
func Auto(now time.Time) (*File, string, error) {
	path, err := DefaultPath()
	if err != nil {
		return nil, "", ErrNone
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", ErrNone
	} else if err != nil {
		return nil, "", err
	}
	f, err := Parse(b, path)
	if err != nil {
		return nil, "", err
	}
	host, _ := os.Hostname()
	if f.Host.Hostname != host || now.Sub(f.Created) > MaxAge || f.Created.After(now.Add(time.Minute)) {
		return nil, "", ErrNone
	}
	return f, path, nil
}

func safe(s string) string {
	if s == "" {
		return "host"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
