// The Accumulator's state: what it keeps of the records added so far,
// each concern's share included (accuracy.go and tasks.go add to theirs).

package summary

import "github.com/reprise-bench/reprise/engine/record"

// Accumulator builds a Summary from records added one at a time. It keeps
// the metric values, not the records: at most [ExactValues] per metric,
// then a sketch of bounded size, so its memory does not grow with the run
// beyond about 25 MiB. It is not safe for concurrent use.
type Accumulator struct {
	opts    Options
	vals    []series
	exact   int // values kept exactly per metric: ExactValues (tests lower it)
	s       Summary
	errIdx  map[errKey]int
	minSent int64
	maxEnd  int64
	minInt  int64
	maxInt  int64
	maxSent int64
	nInt    int
	nSent   int
	good    []int // metric indexes of the goodput SLOs
	// Tasks of dependent requests (tasks.go); nil until a record has one.
	tasks     map[int64]*taskAcc
	taskNodes map[int64]taskNode
	ttftDepth map[int32][]float64
	// targets are the per-target accumulators of a run with several
	// targets (nil otherwise).
	targets []*Accumulator
	// acc holds the graded requests' counts (accuracy.go); nil until a
	// record is graded.
	acc *accAcc
}

type errKey struct {
	kind   record.ErrorKind
	status int32
}

type accAcc struct {
	all   AccuracyStat
	tasks map[string]*AccuracyStat
}

// taskAcc is what the Accumulator keeps per task, and taskNode per
// request of a task (for the critical path).
type taskAcc struct {
	first, last int64 // first send, last end (Unix ns)
	lastReq     int64 // request_id of the request that ended last
	failed      bool
}

type taskNode struct {
	parent    int64
	sent, end int64
}
