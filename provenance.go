package reprise

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"time"

	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// traceDigest is the sha256 and size of a trace's bytes as stored (a
// compressed trace's compressed bytes: what sha256sum prints), computed
// as the trace is read for the first time.
type traceDigest struct {
	h hash.Hash
	n int64
}

func newTraceDigest() *traceDigest { return &traceDigest{h: sha256.New()} }

// Write implements io.Writer; it never fails.
func (d *traceDigest) Write(p []byte) (int, error) {
	d.h.Write(p)
	d.n += int64(len(p))
	return len(p), nil
}

// Sum is the hex sha256 of everything written.
func (d *traceDigest) Sum() string { return hex.EncodeToString(d.h.Sum(nil)) }

// digestReader hashes what is read from src into d. drain reads src to its
// end, so the digest covers bytes the trace reader did not need (its read
// ahead past the last row, a compressed file's trailer).
type digestReader struct {
	io.Reader
	src io.Reader
	d   *traceDigest
}

func newDigestReader(src io.Reader, d *traceDigest) *digestReader {
	return &digestReader{Reader: io.TeeReader(src, d), src: src, d: d}
}

func (r *digestReader) drain() error {
	_, err := io.Copy(io.Discard, r.Reader)
	return err
}

// openDigested opens the trace file at path as trace.Open does, hashing
// its bytes into a new digest as the reader reads them. close closes the
// file after the reader; call drain before it for a complete digest.
func openDigested(path string, opts trace.Options) (r *trace.Reader, dr *digestReader, close func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open trace: %w", err)
	}
	dr = newDigestReader(f, newTraceDigest())
	r, err = trace.NewReader(path, dr, opts)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	return r, dr, func() { r.Close(); f.Close() }, nil
}

// digestFile hashes the file at path in a pass of its own.
func digestFile(path string) (*traceDigest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open trace: %w", err)
	}
	defer f.Close()
	d := newTraceDigest()
	if _, err := io.Copy(d, f); err != nil {
		return nil, fmt.Errorf("read trace %s: %w", path, err)
	}
	return d, nil
}

// preflightManifest is the manifest's "preflight" object: the timer
// preflight's result in ns, and how long it took.
func preflightManifest(p replay.PreflightResult, took time.Duration) map[string]any {
	return map[string]any{
		"primitive":      p.Primitive,
		"period_ns":      p.Period.Nanoseconds(),
		"samples":        p.Samples,
		"sleep_p50_ns":   p.SleepP50.Nanoseconds(),
		"sleep_p99_ns":   p.SleepP99.Nanoseconds(),
		"sleep_max_ns":   p.SleepMax.Nanoseconds(),
		"p50_ns":         p.P50.Nanoseconds(),
		"p99_ns":         p.P99.Nanoseconds(),
		"max_ns":         p.Max.Nanoseconds(),
		"spin_window_ns": p.SpinWindow.Nanoseconds(),
		"took_ns":        took.Nanoseconds(),
	}
}

// runIDKeys are the manifest keys that make a run's id: what every shard
// of one run is given alike (the trace, the model, the request shape and
// the timing settings but the shard's index, --start-at among them).
var runIDKeys = []string{"trace_sha256", "trace_rows", "model", "endpoint", "synthetic", "prompts", "context_mode", "replay"}

// manifestRunID is the run_id of a manifest (docs/format/manifest.md):
// the first 16 hex digits of the SHA-256 of the compact JSON (sorted
// keys, numbers as written) of its runIDKeys, replay.shard.index left
// out. Shards of one run, given the same trace and flags, share it; it
// is computed from the manifest's own bytes, so a reader derives the
// same id from a manifest that predates the key.
func manifestRunID(manifest []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(manifest))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return "", err
	}
	id := make(map[string]any, len(runIDKeys))
	for _, k := range runIDKeys {
		id[k] = m[k]
	}
	if r, ok := m["replay"].(map[string]any); ok {
		c := maps.Clone(r)
		if sh, ok := c["shard"].(map[string]any); ok {
			c["shard"] = map[string]any{"count": sh["count"]}
		}
		id["replay"] = c
	}
	b, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}
