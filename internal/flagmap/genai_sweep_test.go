package flagmap

import (
	"fmt"
	"strings"
	"testing"
)

// TestProfileSweepGenAIPerf: GenAI-Perf's --sweep-type/--sweep-list/
// --sweep-range are read as the comma list of the flag they sweep, and
// its rules' breaches name the flag.
func TestProfileSweepGenAIPerf(t *testing.T) {
	for _, tc := range []struct {
		given vals
		want  string // "setting:values" of the one list, or an error's substring
	}{
		{vals{"sweep-list": "1,2,4"}, "concurrency:[1 2 4]"},
		{vals{"sweep-type": "concurrency", "sweep-range": "1:16"}, "concurrency:[1 2 4 8 16]"},
		{vals{"sweep-type": "concurrency", "sweep-range": "2:8:3"}, "concurrency:[2 5 8]"},
		{vals{"sweep-type": "request_rate", "sweep-range": "10:30:10"}, "request-rate:[10 20 30]"},
		{vals{"sweep-type": "input_sequence_length", "sweep-list": "128,512"}, "isl:[128 512]"},
		{vals{"sweep-type": "concurrency", "sweep-range": "3:16"}, "powers of 2"},
		{vals{"sweep-type": "request_rate", "sweep-range": "1:8"}, "needs a STEP"},
		{vals{"sweep-type": "concurrency", "sweep-range": "8:8"}, "MAX must be greater than MIN"},
		{vals{"sweep-type": "concurrency", "sweep-range": "1:x"}, `"x" is not a whole number`},
		{vals{"sweep-type": "concurrency", "sweep-range": "1:100000:1"}, "more than 1000 values"},
		{vals{"sweep-type": "concurrency"}, "needs --sweep-list"},
		{vals{"sweep-list": "1,2", "sweep-range": "1:4"}, "give one"},
		{vals{"sweep-type": "zip", "sweep-list": "1,2"}, "want GenAI-Perf's"},
		{vals{"sweep-type": "batch_size", "sweep-list": "1,2"}, "--batch-size"},
		{vals{"sweep-type": "num_dataset_entries", "sweep-list": "1,2"}, "--num-dataset-entries"},
		{vals{"sweep-list": "1,2", "concurrency": "4,8"}, "its own list"},
	} {
		ps, _, err := ProfileSweep(tc.given)
		got := fmt.Sprint(err)
		if err == nil && len(ps.Lists) == 1 && ps.Type != "zip" {
			got = fmt.Sprintf("%s:%v", ps.Lists[0].Name, ps.Lists[0].Values)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: got %s, want %s", tc.given, got, tc.want)
		}
	}
}
