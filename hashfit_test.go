package reprise

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// TestHashMismatchFitMooncake: --hash-mismatch fit takes effect for a
// Mooncake JSONL trace (a Dynamo-style agentic one whose rows carry one
// hash id more than their length needs): the rows are replayed, where
// the default refuses them before sending, naming the row.
func TestHashMismatchFitMooncake(t *testing.T) {
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	srv, err := mockserver.Start(t.Context(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	text := `{"request_id": "c0", "timestamp": 0, "input_length": 600, "output_length": 2, "hash_ids": [1, 2, 3]}
{"request_id": "c1", "wait_for": ["c0"], "input_length": 700, "output_length": 2, "hash_ids": [1, 2, 4]}
`
	for _, mode := range []string{"error", "fit"} {
		t.Run(mode, func(t *testing.T) {
			o := NewOptions()
			o.URL, o.Model = srv.URL(), mockserver.DefaultModel
			o.Trace.Reader = strings.NewReader(text)
			o.Replay.Speedup = 100
			o.Telemetry.EndpointMetrics = false
			o.Prompts.HashMismatch = mode
			o.Output.Dir = filepath.Join(t.TempDir(), "run")
			_, err := Run(context.Background(), o)
			if mode == "error" {
				if err == nil || !strings.Contains(err.Error(), "hash_ids: 3 ids but input_length 600 needs 2") {
					t.Fatalf("Run = %v; want row 1's hash_ids refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := arrowio.ReadRequests(o.Output.Dir)
			if err != nil || len(reqs) != 2 || reqs[0].ErrorKind != "" || reqs[1].ErrorKind != "" {
				t.Fatalf("records %+v, %v; want 2 that succeeded", reqs, err)
			}
		})
	}
}
