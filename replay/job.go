package replay

import (
	"context"
	"sync"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// Job is one request handed to a sender. Times are Unix ns on the run's
// [Clock] (the wall clock read once at its start plus monotonic elapsed
// time), so DispatchedNS − IntendedNS is the exact lateness.
//
// Ownership: the sender owns the Job; it is valid only during the
// Handle call that receives it and is reused afterwards.
type Job struct {
	// ID is run-unique and dense from 0 in dispatch order (skipped jobs
	// take ids too); it is record.Request.RequestID.
	ID uint64
	// Item is the index of the trace row in the slice given to NewPlan,
	// or the synthetic request's index 0, 1, 2, … for a synthetic load.
	Item int
	// Session is the dense index of the item's session (synthetic: Item);
	// Turn is the 0-based position of the turn in its session.
	Session int
	Turn    int
	// SessionRun identifies one run of a session through its turns: it is
	// run-unique, from 1, taken when the session's first turn is sent (or
	// skipped), and carried by each later turn. A session started again
	// (the trace wrapped around) gets a new one, so two runs of one
	// session that overlap stay apart (per-run state such as a multi-turn
	// history is keyed by it).
	SessionRun uint64
	// Last reports the session run's last turn: no later turn follows it
	// (a one-row session's only turn). In a plan with dependencies it is
	// false: a task ends when its last request does, known only then.
	Last bool
	// Depth is the item's level in its task's dependency graph (0 for a
	// root, else 1 + the deepest of its dependencies), -1 in a plan
	// without dependencies. ReleasedBy is ID + 1 of the job whose
	// completion released this one (the last of its dependencies to
	// complete), 0 for none. In such a plan Session is the task.
	Depth      int
	ReleasedBy uint64
	// DependsOn lists the IDs of the jobs this one waited for (its
	// dependencies inside the offset window, in the trace's wait_for
	// order), nil for a root or a plan without dependencies. The slice
	// is shared and stays valid after Handle returns: read it, never
	// modify it.
	DependsOn []uint64
	Phase     record.Phase
	// Sender is the id of the sender running the job, 0..Senders−1
	// (-1 for a skipped job).
	Sender int

	// IntendedNS is when the schedule meant to send the job. For a later
	// turn of a session that is the later of its own time and the
	// previous turn's completion (plus its delay); SessionDelayNS is the
	// part of that caused by the previous turn (IntendedNS −
	// SessionDelayNS is the time the trace asked for). ShiftNS is how far
	// LateShift moved the job's time (already in IntendedNS).
	IntendedNS     int64
	DispatchedNS   int64
	SessionDelayNS int64
	ShiftNS        int64

	// Late reports a lateness above Config.LateThreshold. Waited reports
	// that no sender or session slot was free at the intended time, so
	// the job waited for one. Skipped reports a job LateSkip dropped:
	// it is never sent and reaches only [SkipHandler].
	Late    bool
	Waited  bool
	Skipped bool
	// DepFailed reports, on a skipped job, that it was not sent because a
	// request it depends on failed or was skipped (design 0008).
	DepFailed bool
	// Failed is set by the [Handler] before Handle returns when the
	// request failed; in a plan with dependent requests its dependents
	// are then skipped (DepFailed) instead of sent.
	Failed bool

	clock   *Clock       // the run's clock, for NowNS
	prefill *prefillGate // the prefill slot the job holds (FirstToken gives it back)
}

// NowNS returns the current time on the run's clock (Unix ns), the clock
// of IntendedNS and DispatchedNS: stamp the request's own times (sent,
// first byte, …) with it so differences with IntendedNS are exact. It is
// safe for concurrent use and allocates nothing. It returns 0 for a Job
// that did not come from a run.
func (j *Job) NowNS() int64 {
	if j.clock == nil {
		return 0
	}
	return j.clock.Now()
}

// Lateness returns DispatchedNS − IntendedNS.
func (j *Job) Lateness() time.Duration { return time.Duration(j.DispatchedNS - j.IntendedNS) }

// Handler runs jobs. Handle runs one request synchronously on a sender
// goroutine; its return means the request completed, which releases the
// sender, schedules the session's next turn and, in the closed loop,
// starts the next session. Handle is called from many senders at once. It
// must return soon after ctx is cancelled (end of grace, or the caller's
// cancellation).
type Handler interface {
	Handle(ctx context.Context, j *Job)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, j *Job)

// Handle calls f(ctx, j).
func (f HandlerFunc) Handle(ctx context.Context, j *Job) { f(ctx, j) }

var _ Handler = HandlerFunc(nil)

// SkipHandler is implemented by a [Handler] that wants to record the jobs
// LateSkip drops (the engine writes them as skipped rows). Skip is
// called on the dispatcher's goroutine: it must be quick, must not block,
// and must not keep j.
type SkipHandler interface {
	Skip(j *Job)
}

// prefillGate caps the jobs waiting for their first token
// (Config.PrefillConcurrency, AIPerf's --prefill-concurrency). A sender
// takes a slot before it hands its job to the Handler and gives it back
// when the Handler reports the first token ([Job.FirstToken]) or, at the
// latest, when Handle returns. The cap ramps as the closed-loop level
// does: rampLevel(t, n, ramp) slots at run time t, 1 → n in even steps.
//
// The wait happens on the sender, after the dispatcher fired the job:
// the job keeps its session (and concurrency) slot meanwhile, as in
// AIPerf, and the wait shows as SentNS − DispatchedNS of its record, not
// as schedule lateness. Safe for concurrent use; acquire allocates only
// while a ramp is in progress (a timer for the next step).
type prefillGate struct {
	n    int
	ramp time.Duration
	now  func() int64 // run time, ns

	mu   sync.Mutex
	held int
	// freed carries a token per release while someone may wait; a
	// waiter that wakes re-checks, so a stale token costs a loop.
	freed chan struct{}
}
