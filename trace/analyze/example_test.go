package analyze_test

import (
	"fmt"

	"github.com/reprise-bench/reprise/trace/analyze"
)

// The engine predicts the cached tokens a server should report for each
// request: look up before sending, insert once served.
func ExamplePrefixCache() {
	c := analyze.NewPrefixCache(512, 3_000_000)    // 3M tokens = 5,859 slots of 512 tokens
	fmt.Println(c.Access([]uint64{1, 2, 3}, 1300)) // cold
	fmt.Println(c.Access([]uint64{1, 2, 4}, 1400)) // shares two blocks
	fmt.Println(c.Lookup([]uint64{1, 9, 3}, 1500)) // the leading run stops at 9
	// Output:
	// 0
	// 1024
	// 512
}
