package synth_test

import (
	"fmt"
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
