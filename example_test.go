package reprise_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/internal/mockserver"
)

// Example replays a synthetic load (20 requests of 16 input and 4 output
// tokens, 2 at a time) against the in-process mock server and reads the
// verdict and counts from the Result; the run directory holds the records,
// manifest.json and summary.json.
func Example() {
	mcfg := mockserver.NewConfig()
	mcfg.Addr, mcfg.TTFT, mcfg.ITL = "127.0.0.1:0", time.Millisecond, 0
	srv, err := mockserver.Start(context.Background(), mcfg)
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "reprise-example-")
	defer os.RemoveAll(dir)

	o := reprise.NewOptions()
	o.URL, o.Model = srv.URL(), mockserver.DefaultModel
	o.Synthetic = reprise.SyntheticLoad{ISL: 16, OSL: 4}
	o.Replay.Concurrency, o.Replay.RequestCount = 2, 20
	o.Output.Dir = filepath.Join(dir, "run")
	res, err := reprise.Run(context.Background(), o)
	if err != nil {
		panic(err)
	}
	s := res.Summary
	fmt.Printf("%d requests, %d failed, %d output tokens; verdicts: %v\n",
		s.RequestCount, s.ErrorRequestCount, s.TotalOSL, res.Verdicts)
	// Output: 20 requests, 0 failed, 80 output tokens; verdicts: []
}
