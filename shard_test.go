package reprise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/replay"
)

// bodyServer answers every chat completion with one token and counts the
// request bodies it received by their SHA-256 (text keeps each body, for
// the failure message).
type bodyServer struct {
	mu     sync.Mutex
	bodies map[[32]byte]int
	text   map[[32]byte][]byte
}

func (b *bodyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		http.NotFound(w, r) // no /v1/models for the preflight: it passes on any answer
		return
	}
	body, _ := io.ReadAll(r.Body)
	h := sha256.Sum256(body)
	b.mu.Lock()
	b.bodies[h]++
	b.text[h] = body
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
}

// shardBodies runs o (over trace, when not nil) as shards 0..n-1 of n
// (n = 0: unsharded) against one server and returns the bodies it
// received, counted.
func shardBodies(t *testing.T, o Options, trace []byte, n int) (map[[32]byte]int, map[[32]byte][]byte) {
	t.Helper()
	bs := &bodyServer{bodies: map[[32]byte]int{}, text: map[[32]byte][]byte{}}
	srv := httptest.NewServer(bs)
	defer srv.Close()
	o.URL = srv.URL
	for i := range max(n, 1) {
		if n > 0 {
			o.Replay.Shard = replay.Shard{Index: i, Count: n}
		}
		o.Output.Dir = filepath.Join(t.TempDir(), "run")
		if trace != nil {
			o.Trace.Reader = bytes.NewReader(trace)
		}
		res, err := Run(context.Background(), o)
		if err != nil {
			t.Fatalf("shard %d/%d: %v", i, n, err)
		}
		if len(res.Verdicts) > 0 {
			t.Fatalf("shard %d/%d: verdicts %v", i, n, res.Verdicts)
		}
	}
	return bs.bodies, bs.text
}

// TestShardPromptsIdentical: a row's request body is byte for byte the
// same whichever shard sends it, so the shards of a run together send
// exactly the unsharded run's bodies, each once: a Mooncake window (rows
// with shared prefixes) on the fixed schedule, and a synthetic load.
func TestShardPromptsIdentical(t *testing.T) {
	o := NewOptions()
	o.Model, o.Streaming = "m", false
	o.Telemetry.EndpointMetrics = false
	// The trace's first 80 rows (22 s of trace; rows share prefixes) at
	// 100× speed.
	lines := bytes.SplitAfterN(testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl"), []byte("\n"), 81)
	head := bytes.Join(lines[:80], nil)
	o.Replay.Speedup = 100
	o.Replay.Grace = time.Second
	o.Synthetic.OSL = 4
	o.MaxTokensFromTrace = false

	syn := NewOptions()
	syn.Model, syn.Streaming = "m", false
	syn.Telemetry.EndpointMetrics = false
	syn.Synthetic = SyntheticLoad{ISL: 40, ISLStdDev: 10, OSL: 4}
	syn.Replay.Concurrency, syn.Replay.RequestCount = 4, 30

	for name, tc := range map[string]struct {
		o     Options
		trace []byte
	}{"mooncake": {o, head}, "synthetic": {syn, nil}} {
		t.Run(name, func(t *testing.T) {
			whole, wholeText := shardBodies(t, tc.o, tc.trace, 0)
			sharded, shardText := shardBodies(t, tc.o, tc.trace, 3)
			t.Logf("%d unsharded bodies, %d sharded", len(whole), len(sharded))
			if len(whole) < 20 {
				t.Fatalf("only %d distinct bodies", len(whole))
			}
			if diff := cmp.Diff(whole, sharded); diff != "" {
				t.Errorf("bodies by hash (-unsharded +3 shards):\n%s", diff)
				for h, b := range wholeText {
					if sharded[h] == 0 {
						t.Errorf("only unsharded: %s", b)
					}
				}
				for h, b := range shardText {
					if whole[h] == 0 {
						t.Errorf("only sharded: %s", b)
					}
				}
			}
			for n := range maps.Values(sharded) {
				if n != 1 {
					t.Errorf("a body was sent %d times", n)
				}
			}
		})
	}
}
