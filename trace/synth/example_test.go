package synth_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/reprise-bench/reprise/trace"
	"github.com/reprise-bench/reprise/trace/synth"
)

// Generate a small multi-turn trace with one shared system prompt and
// write it as Mooncake JSONL. A later turn holds its 600 new tokens only
// (AIPerf's dialect): the replay sends it after the first turn's prompt
// and response, a 2324-token context that repeats the full blocks of the
// turn before; the hit ratio of the contexts is
// (1024 + 1536 + 1536) / (2·1624 + 2·2324).
func ExampleGenerate() {
	c := synth.NewGenerateConfig()
	c.Rate, c.Sessions, c.Arrival = 2, 2, synth.ArrivalConstant
	c.Turns, c.ThinkTime = 2, 3*time.Second
	c.PrefixRoots, c.PrefixTokens = 1, []int{1024}
	c.ISL, c.OSL = synth.Fixed(600), synth.Fixed(100)
	res, err := synth.Generate(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := synth.Write(os.Stdout, res); err != nil {
		fmt.Println(err)
	}
	fmt.Printf("hit ratio %.4f, working set %d tokens\n", res.Generate.HitRatio, res.Generate.WorkingSetTokens)
	// Output:
	// {"timestamp": 0, "session_id": "s0", "input_length": 1624, "output_length": 100, "hash_ids": [0, 1, 2, 3]}
	// {"timestamp": 500, "session_id": "s1", "input_length": 1624, "output_length": 100, "hash_ids": [0, 1, 4, 5]}
	// {"delay": 3000, "session_id": "s0", "input_length": 600, "output_length": 100, "hash_ids": [6, 7]}
	// {"delay": 3000, "session_id": "s1", "input_length": 600, "output_length": 100, "hash_ids": [8, 9]}
	// hit ratio 0.5187, working set 5120 tokens
}

// Derive a trace at twice the speed with its sessions spread over two
// copies of the prefix tree, and compare the ceiling with the formula:
// each of the two shared blocks, used 8 times, now expects
// 8 − 2·(1 − 2⁻⁸) hits instead of 7.
func ExampleDerive() {
	var rows []trace.Row
	for i := range 8 {
		rows = append(rows, trace.Row{
			Offset: time.Duration(i) * time.Second, HasOffset: true,
			InputTokens: 1500, OutputTokens: 50, BlockSize: 512,
			HashIDs: []uint64{0, 1, uint64(2 + i)}, ParentID: -1, RequestID: -1,
		})
	}
	cfg := synth.NewDeriveConfig()
	cfg.Speedup, cfg.PrefixRootMultiplier = 2, 2
	res, err := synth.Derive(rows, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	last := res.Rows[len(res.Rows)-1]
	fmt.Printf("last arrival %v, ids %v\n", last.Offset, last.HashIDs)
	fmt.Printf("ceiling %.4f before, %.4f expected after\n", res.Derive.CeilingBefore, res.Derive.ExpectedCeiling)
	fmt.Printf("measured %.4f\n", synth.Measure(res.Rows, 0, []int64{}).Cache.TokenHitRatio)
	// Output:
	// last arrival 3.5s, ids [10 11 15]
	// ceiling 0.5973 before, 0.5127 expected after
	// measured 0.5120
}

// Run is `reprise synthesize` as one call: options in (by field, with the
// options given named in Set), the trace written through Env.Write, a
// summary out.
func ExampleRun() {
	o := synth.NewOptions()
	o.Requests, o.Rate, o.Arrival = 3, 1, "constant"
	o.Set = map[string]bool{"requests": true, "rate": true, "arrival": true}
	sum, err := synth.Run(context.Background(), o, synth.Env{
		Write: func(fill func(io.Writer) error) error { return fill(os.Stdout) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	sum.Print(os.Stdout)
	// Output:
	// {"timestamp": 0, "input_length": 550, "output_length": 150, "hash_ids": [0, 1]}
	// {"timestamp": 1000, "input_length": 550, "output_length": 150, "hash_ids": [2, 3]}
	// {"timestamp": 2000, "input_length": 550, "output_length": 150, "hash_ids": [4, 5]}
	// synthesize: 3 rows (mooncake) to stdout
	//   span 2.0000 s, mean rate 1.500 req/s, ISL mean 550.0, OSL mean 150.0
	//   infinite-cache token hit ratio 0.0000 (block 0.0000), working set 3,072 tokens (6 blocks of 512)
	//   generate: 3 sessions
}
