package replay

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/trace"
)

// Hot path: TestDispatchAllocs proves fire, admit, complete and the
// sender loop allocate nothing per job; TestStreamRunAllocsIndependentOfLength
// does for a streamed plan's row reads and releases.

const (
	// pollInterval bounds the dispatcher's sleep while senders may hand
	// it work (a session's next turn, a freed slot): it only learns of
	// them when it wakes.
	pollInterval = 200 * time.Microsecond
	// waitInterval is the dispatcher's nap while a due job waits for a
	// free sender or session slot (it is already late; finer polling
	// would cost CPU exactly when the client is saturated).
	waitInterval = 50 * time.Microsecond
	// maxNap bounds any sleep so cancellation is noticed promptly.
	maxNap = 50 * time.Millisecond
)

// Run plans and runs cfg over rows (nil = synthetic load) in one call:
// [NewPlan] then [Plan.Run].
func Run(ctx context.Context, cfg Config, rows []trace.Row, h Handler) (Stats, error) {
	p, err := NewPlan(cfg, rows)
	if err != nil {
		return Stats{}, err
	}
	return p.Run(ctx, h)
}

// Run dispatches the plan's jobs to h at their intended times and returns
// when every job has completed (or was cancelled at the end of grace). It
// returns ctx's error when ctx was cancelled, with the Stats so far, and a
// streamed plan's read error ([trace.Window.Err]) when its trace could not
// be read again (the run stops at the first row it could not read). A
// lateness budget breach is not an error here: see [Stats.Check]. Run may
// be called once per Plan; it locks the calling goroutine to its OS thread
// for the duration of the run and, on Linux, raises GOMAXPROCS by one
// meanwhile (the dispatcher keeps a P while it waits for a deadline), then
// restores it. Its times are on a [Clock] started when Run is called.
func (p *Plan) Run(ctx context.Context, h Handler) (Stats, error) {
	return p.run(ctx, h, newPrecisionSleeper, nil)
}

// RunOnClock is [Plan.Run] with every time of the run (IntendedNS,
// DispatchedNS, [Job.NowNS]) read on clk, which may have started before
// the run. A caller stamping its own times on clk (the engine does) gets
// differences with IntendedNS that are exact, whatever the wall clock did
// since clk started. The schedule still starts when RunOnClock is called.
func (p *Plan) RunOnClock(ctx context.Context, h Handler, clk *Clock) (Stats, error) {
	if clk == nil {
		panic("BUG: replay: nil Clock")
	}
	return p.run(ctx, h, newPrecisionSleeper, clk)
}

// event kinds of the dispatcher's heap.
const (
	evTurn    uint8 = iota // a session's next turn (item) is due
	evUser                 // a user-centric user starts (item = its first turn)
	evSession              // closed loop / ramp step: start one more session
	evSkip                 // a dependent item whose dependency failed: skip it
)

type event struct {
	due  int64
	sd   int64  // session delay folded into due
	run  uint64 // evTurn: the session run the turn continues
	item int32
	kind uint8
}

// sender is one long-lived goroutine running jobs. The dispatcher writes
// job only while the sender is idle (its id is on the idle stack), then
// sends a token on wake; the channel hand-off orders the write before the
// sender's read.
type sender struct {
	job  Job
	wake chan struct{}
	id   int32
	rel  []int32 // completeDAG's reusable list of released items
	_    [64]byte
}

type runner struct {
	p     *Plan
	cfg   *Config
	h     Handler
	skipH SkipHandler
	sl    sleeper
	clock *Clock // the run's clock: Unix ns = wall0 + sl.now()
	wall0 int64
	hctx  context.Context // handlers' context, cancelled at the end of grace
	// runCtx is the run's context: once it is cancelled no job is
	// admitted, by the dispatcher or by a sender starting the next
	// session itself.
	runCtx context.Context

	senders []sender
	kickers []kicker
	prefill *prefillGate // Config.PrefillConcurrency; nil without
	idle    *idleStack
	posts   *ring[event] // later turns senders computed, for the dispatcher
	heap    []event      // dispatcher only
	quit    chan struct{}
	wg      sync.WaitGroup

	warmN       atomic.Int64
	profileN    atomic.Int64
	seq         atomic.Uint64
	runs        atomic.Uint64 // session runs started (Job.SessionRun)
	outstanding atomic.Int64  // jobs in senders + posted continuations
	active      atomic.Int64  // sessions in flight
	nextSess    atomic.Int64
	stopped     atomic.Bool
	stopReason  atomic.Pointer[string]
	profileAt   atomic.Int64 // start of the measured phase, ns; -1 unknown
	shift       atomic.Int64
	st          *collector

	// level and chains: Config.Adaptive's closed-loop level and the
	// sessions of the loop (adaptive.go).
	level, chains atomic.Int64

	// static sources (dispatcher only)
	fixedNext int     // next fixed-schedule session start (index into p.sessFirst)
	tickX     float64 // rate mode: count-axis position of the next tick
	tickAt    int64
	gaps      *gapSampler
	dynamic   bool // senders may hand the dispatcher work
	stopAt    int64
	// blockedDue is the due time of the event last blocked (no sender or
	// slot), so that the job finally sent for it is marked Waited;
	// blockedSlot tells that it lacked a session slot.
	blockedDue  int64
	blockedSlot bool
	scratch     []event // fireDueTurns' reusable buffer

	// Dependencies (design 0008), nil without them: pend counts each item's
	// dependencies not yet completed, doomed marks an item one of whose
	// dependencies failed or was skipped, taskLeft counts each task's
	// items not yet done, and taskStarted (dispatcher only) marks the
	// tasks whose first request went out.
	pend        []atomic.Int32
	doomed      []atomic.Bool
	taskLeft    []atomic.Int32
	taskStarted []bool
	skipStack   []int32  // skipDAG's reusable stack
	relBy       []uint64 // Job.ReleasedBy by item, written before the item is posted or inlined
	// depIDs holds, in the slots of Plan.predStart, the job ids of each
	// item's dependencies (Job.DependsOn), each written by the dependency's
	// completion before the decrement of pend that may release the item.
	depIDs []uint64
}

// run runs the plan with the sleeper newSleeper returns, its times on clk
// (nil: a Clock started with the run).
func (p *Plan) run(ctx context.Context, h Handler, newSleeper func(time.Time) sleeper, clk *Clock) (Stats, error) {
	if h == nil {
		panic("BUG: replay: nil Handler")
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if p.win != nil {
		// Before t0: the reader starts and the first row is there (the
		// engine's builders usually started it already).
		p.win.Row(p.first)
	}
	sl := newSleeper(time.Now())
	r := newRunner(p, h, sl, nil, 0, hctx)
	r.runCtx = ctx
	r.startSenders()
	r.seed()
	undo := sl.setup()

	// Time zero is taken now that the senders run and the dispatcher's
	// thread is set up: both take time (setup changes GOMAXPROCS, which
	// stops the world), and a request due at zero counted it as lateness
	// (the first burst of a run, 2 ms late in a fifth of runs on a 2-core
	// VM). The senders read the clock only once woken, after this.
	base := time.Now()
	if at := p.cfg.StartAt; !at.IsZero() {
		// Time zero is StartAt: base keeps the monotonic reading, moved by
		// the wall-clock distance to StartAt (the sleeper waits for it).
		base = base.Add(at.Sub(base))
	}
	if clk == nil {
		clk = ClockAt(base)
	}
	// The sleeper counts from base, the clock from its start: base's
	// reading on the clock (wall0) plus the sleeper's count is the clock's
	// reading, exactly (both are monotonic differences in integer ns).
	sl.rebase(base)
	r.clock, r.wall0 = clk, clk.at(base)
	r.startControl()
	r.startWatch()
	cpu0 := threadCPU()
	err := r.dispatch(ctx, cancel)
	stats := r.stats()
	stats.DispatcherCPU = threadCPU() - cpu0
	undo()
	r.stopSenders()
	if p.win != nil {
		p.win.Close()
		if werr := p.win.Err(); werr != nil && err == nil {
			err = werr
		}
	}
	stats.Elapsed = time.Duration(r.sl.now())
	if stats.Elapsed > 0 {
		stats.SpinShare = float64(r.sl.spinNS()) / float64(stats.Elapsed)
	}
	return stats, err
}

// newRunner allocates everything a run needs up front. wall0 is the
// reading of clk (the run's Clock; nil in tests) at sl's base.
func newRunner(p *Plan, h Handler, sl sleeper, clk *Clock, wall0 int64, hctx context.Context) *runner {
	r := &runner{p: p, cfg: &p.cfg, h: h, sl: sl, clock: clk, wall0: wall0,
		quit: make(chan struct{}), hctx: hctx}
	r.skipH, _ = h.(SkipHandler)
	r.st = newCollector(p.cfg.LateThreshold)
	r.profileAt.Store(-1)
	r.blockedDue = math.MinInt64
	if p.cfg.WarmupRequests == 0 {
		r.profileAt.Store(int64(p.cfg.WarmupDuration))
	}
	n := p.Senders()
	r.idle = newIdleStack(n)
	r.posts = newRing[event](max(1024, 4*n))
	r.heap = make([]event, 0, max(64, len(p.users)+64))
	r.dynamic = p.next != nil || p.dag || p.mode == ModeConcurrency || p.mode == ModeUserCentric
	if p.dag {
		r.pend = make([]atomic.Int32, len(p.npred))
		for i, n := range p.npred {
			r.pend[i].Store(n)
		}
		r.doomed = make([]atomic.Bool, len(p.npred))
		r.taskLeft = make([]atomic.Int32, p.tasks)
		for t, n := range p.sessLen {
			r.taskLeft[t].Store(n)
		}
		r.taskStarted = make([]bool, p.tasks)
		r.relBy = make([]uint64, len(p.npred))
		r.depIDs = make([]uint64, p.predStart[len(p.npred)])
	}
	if p.mode == ModeRate {
		r.gaps = newGapSampler(p.cfg.Arrival, p.cfg.Smoothness, arrivalSeed(p.cfg.Seed, p.cfg.Shard))
		r.tickX = shardPhase(p.cfg.Shard, p.cfg.Arrival, r.gaps)
		r.tickAt = p.tickTime(r.tickX)
	}
	r.senders = make([]sender, n)
	for i := range r.senders {
		s := &r.senders[i]
		s.id = int32(i)
		s.wake = make(chan struct{}, 1)
	}
	r.kickers = make([]kicker, 4)
	if c := p.cfg.PrefillConcurrency; c > 0 {
		r.prefill = newPrefillGate(c, p.cfg.PrefillConcurrencyRamp, n, sl.now)
	}
	return r
}

func (r *runner) startSenders() {
	r.wg.Add(len(r.senders) + len(r.kickers))
	for i := range r.senders {
		s := &r.senders[i]
		r.idle.push(s.id)
		go r.senderLoop(s)
	}
	for i := range r.kickers {
		k := &r.kickers[i]
		k.ch = make(chan struct{}, 1)
		go r.kickerLoop(k)
	}
}

// A sender the dispatcher wakes goes to the run queue's next slot of the
// dispatcher's P, which the dispatcher keeps (it sleeps holding it; see
// clock_linux.go). Another P may take a goroutine from that slot only
// after a pause (the runtime's usleep(3), tens of µs on a VM), and
// otherwise the sender waits for the next wake to push it to the queue
// proper: at 10k req/s a typical send trailed its dispatch by ~120 µs.
// So after waking a sender the dispatcher wakes a kicker, an idle
// goroutine that takes the next slot and pushes the sender into the
// queue, where an idle P takes it at once. A kicker has no other work.
type kicker struct {
	ch     chan struct{}
	parked atomic.Bool
	_      [64]byte
}

func (r *runner) kickerLoop(k *kicker) {
	defer r.wg.Done()
	for {
		k.parked.Store(true)
		select {
		case <-k.ch:
		case <-r.quit:
			return
		}
	}
}

// kick wakes a parked kicker, if one is (best effort: a kicker that is
// about to park takes the token without a wake-up).
func (r *runner) kick() {
	for i := range r.kickers {
		k := &r.kickers[i]
		if k.parked.Load() {
			k.parked.Store(false)
			select {
			case k.ch <- struct{}{}:
			default:
			}
			return
		}
	}
}

func (r *runner) stopSenders() {
	close(r.quit)
	r.wg.Wait()
}

// seed puts the events known at the start into the heap.
func (r *runner) seed() {
	p := r.p
	switch p.mode {
	case ModeConcurrency:
		if a := p.cfg.Adaptive; a != nil {
			r.chains.Store(int64(a.Start))
			for range a.Start {
				r.push(event{due: 0, kind: evSession})
			}
			return
		}
		for k := range p.cfg.Concurrency {
			at := int64(0)
			if k > 0 {
				at = rampStepTime(k, p.cfg.Concurrency, p.cfg.ConcurrencyRamp)
			}
			r.push(event{due: at, kind: evSession})
		}
	case ModeUserCentric:
		for _, u := range p.users {
			s, ok := r.takeSession()
			if !ok {
				break
			}
			first := p.sessFirst[s]
			if u.Turns > 0 {
				// Warm start: the user resumes with its session's last
				// u.Turns turns.
				for skip := int(p.sessLen[p.sessOf[first]]) - u.Turns; skip > 0 && p.next[first] >= 0; skip-- {
					first = p.next[first]
				}
			}
			r.push(event{due: u.At, item: first, kind: evUser})
		}
	}
}

func (r *runner) stop(reason string) {
	if r.stopped.CompareAndSwap(false, true) {
		r.stopReason.Store(&reason)
	}
}

// takeSession returns the next session to start, wrapping around the
// trace when the plan allows; false when none is left.
func (r *runner) takeSession() (int32, bool) {
	k := r.nextSess.Add(1) - 1
	if r.p.synthetic() {
		return int32(k), true // synthetic: item = session = index
	}
	ns := r.p.sessions()
	if k >= ns {
		if !r.p.wrap {
			return 0, false
		}
		if r.p.win != nil {
			// Streamed: positions count on around the trace (the
			// window reads it again); item = first + k.
			if k > math.MaxInt32-r.p.first {
				return 0, false
			}
			return int32(k), true
		}
		k %= ns
	}
	return int32(k), true
}

func (r *runner) firstItem(s int32) int32 {
	switch {
	case r.p.synthetic():
		return s
	case r.p.win != nil:
		return int32(r.p.first) + s
	}
	return r.p.sessFirst[s]
}

// admit decides a job's phase and id and applies the stop conditions;
// false means the run stops issuing.
func (r *runner) admit(j *Job) bool {
	if r.stopped.Load() {
		return false
	}
	if r.runCtx != nil && r.runCtx.Err() != nil {
		// A sender completing a cancelled request sees the cancellation
		// before the dispatcher, asleep, does.
		r.stop("cancelled")
		return false
	}
	c := r.cfg
	warm := (c.WarmupRequests > 0 && r.warmN.Add(1) <= int64(c.WarmupRequests)) ||
		(c.WarmupDuration > 0 && j.IntendedNS-r.wall0 < int64(c.WarmupDuration))
	if warm {
		j.Phase = record.PhaseWarmup
	} else {
		j.Phase = record.PhaseProfile
		if r.p.limit > 0 && r.profileN.Add(1) > int64(r.p.limit) {
			r.stop("request count reached")
			return false
		}
		if c.Duration > 0 {
			at := r.profileAt.Load()
			if at < 0 {
				r.profileAt.CompareAndSwap(-1, j.IntendedNS-r.wall0)
				at = r.profileAt.Load()
			}
			if j.IntendedNS-r.wall0 >= at+int64(c.Duration) {
				r.stop("duration reached")
				return false
			}
		}
	}
	j.ID = r.seq.Add(1) - 1
	return true
}

// setJob fills j for item (intended and session delay in run ns) of
// session run run (0: a new run starts with item).
func (r *runner) setJob(j *Job, item int32, intended, sd int64, run uint64) {
	if run == 0 {
		run = r.runs.Add(1)
	}
	*j = Job{Item: int(item), Session: int(item), SessionRun: run, IntendedNS: r.wall0 + intended, SessionDelayNS: sd, Sender: -1,
		Depth: -1, Last: true, clock: r.clock}
	switch {
	case r.p.win != nil:
		// Streamed: every session is one row (Turn 0).
		j.Session = int((int64(item) - r.p.first) % r.p.n)
	case r.p.rows != nil:
		j.Session = int(r.p.sessOf[item])
		j.Turn = r.p.rows[item].Turn
		j.Last = !r.p.dag && (r.p.next == nil || r.p.next[item] < 0)
		if r.p.dag {
			j.Depth, j.ReleasedBy = int(r.p.depth[item]), r.relBy[item]
			if a, b := r.p.predStart[item], r.p.predStart[item+1]; a < b {
				j.DependsOn = r.depIDs[a:b:b]
			}
		}
	}
}

// fireResult says what became of an event the dispatcher tried to fire.
type fireResult uint8

const (
	fired     fireResult = iota // sent, skipped or dropped: the event is consumed
	blocked                     // no free sender (or session slot): retry it later
	exhausted                   // no session left to start: the event is consumed
	stopped                     // a stop condition tripped
)

// noItem asks fire to take the next session itself, once a sender and a
// slot are free, so a blocked event consumes no session.
const noItem = -1

// fire hands item (or, with noItem, the next session's first turn) to an
// idle sender at run time intended; the dispatcher calls it once the time
// has come. It never waits: without a free sender, or a session slot for
// a new session, it returns blocked (or, with LateSkip and a lateness
// over the threshold, drops the job). The caller keeps a blocked event and
// retries it, so the dispatcher keeps serving everything else meanwhile.
func (r *runner) fire(item int32, intended, sd int64, run uint64) fireResult {
	c := r.cfg
	newSession := run == 0
	if r.p.dag {
		// A task is the session: it starts with its first request.
		task := r.p.sessOf[item]
		newSession = !r.taskStarted[task]
		run = uint64(task) + 1
	}
	lateSkip := c.Late == LateSkip && r.sl.now()-intended > int64(c.LateThreshold)
	var sid int32 = -1
	capped := newSession && c.Concurrency > 0 && r.p.mode != ModeConcurrency && r.active.Load() >= int64(c.Concurrency)
	if !capped {
		if id, ok := r.idle.pop(); ok {
			sid = id
		}
	}
	if sid < 0 || lateSkip {
		if sid >= 0 {
			r.idle.push(sid)
		}
		if !lateSkip {
			r.blockedDue, r.blockedSlot = intended, capped
			return blocked
		}
		if item == noItem {
			s, ok := r.takeSession()
			if !ok {
				return exhausted
			}
			item = r.firstItem(s)
		}
		if !r.skip(item, intended, sd, run) {
			return stopped
		}
		return fired
	}
	if item == noItem {
		s, ok := r.takeSession()
		if !ok {
			r.idle.push(sid)
			return exhausted
		}
		item = r.firstItem(s)
	}
	s := &r.senders[sid]
	j := &s.job
	r.setJob(j, item, intended, sd, run)
	if !r.admit(j) {
		r.idle.push(sid)
		return stopped
	}
	if newSession {
		r.active.Add(1)
		if r.p.dag {
			r.taskStarted[r.p.sessOf[item]] = true
		}
	}
	j.Sender = int(sid)
	j.Waited = r.blockedDue == intended
	r.blockedDue = math.MinInt64
	j.ShiftNS = r.shift.Load()
	j.DispatchedNS = r.wall0 + r.sl.now()
	late := j.DispatchedNS - j.IntendedNS
	j.Late = late > int64(c.LateThreshold)
	if c.Late == LateShift && j.Late {
		r.shift.Add(late)
	}
	r.st.record(j)
	r.outstanding.Add(1)
	s.wake <- struct{}{}
	r.kick()
	return fired
}

// skip drops item and the rest of its session (LateSkip). A session
// already in flight (newSession false) ends here: its slot is released
// and, in the closed loop, a replacement session is started.
func (r *runner) skip(item int32, intended, sd int64, run uint64) bool {
	if r.p.dag {
		return r.skipDAG(item, intended, false)
	}
	newSession := run == 0
	if newSession {
		run = r.runs.Add(1)
	}
	r.blockedDue = math.MinInt64
	if !newSession {
		r.active.Add(-1)
	}
	if r.p.mode == ModeConcurrency {
		r.push(event{due: r.sl.now(), kind: evSession})
	}
	for it := item; it >= 0; {
		var j Job
		r.setJob(&j, it, intended, sd, run)
		if !r.admit(&j) {
			return false
		}
		j.Skipped = true
		j.DispatchedNS = 0
		r.st.skipped.Add(1)
		if r.skipH != nil {
			r.skipH.Skip(&j)
		}
		r.p.release(it)
		if r.p.next == nil {
			break
		}
		it = r.p.next[it]
	}
	return true
}

// senderLoop runs jobs until the run ends.
func (r *runner) senderLoop(s *sender) {
	defer r.wg.Done()
	for {
		select {
		case <-s.wake:
		case <-r.quit:
			return
		}
		for {
			if r.prefill != nil {
				r.prefill.acquire(r.hctx, &s.job)
			}
			r.h.Handle(r.hctx, &s.job)
			s.job.FirstToken() // the prefill slot, if the response had no token
			r.p.release(int32(s.job.Item))
			if !r.complete(s) {
				break
			}
		}
		r.idle.push(s.id)
	}
}

// complete runs on the sender after Handle returned. It schedules the
// session's next turn: run it here at once when it is already due
// (returns true with s.job refilled), else post it to the dispatcher. At
// a session's end in the closed loop it starts the next session here.
func (r *runner) complete(s *sender) bool {
	if r.p.dag {
		return r.completeDAG(s)
	}
	j := &s.job
	now := r.sl.now()
	r.st.completed.Add(1)
	p := r.p
	if p.next != nil && !r.stopped.Load() {
		if nx := p.next[j.Item]; nx >= 0 {
			due, sd := r.turnDue(j, nx, now)
			if due <= now && p.mode != ModeRate {
				if r.inline(s, nx, due, sd, j.SessionRun) {
					return true
				}
			} else {
				r.outstanding.Add(1)
				for !r.posts.push(event{due: due, sd: sd, run: j.SessionRun, item: nx, kind: evTurn}) {
					runtime.Gosched() // the dispatcher drains it every wake-up
				}
				r.outstanding.Add(-1)
				return false
			}
		}
	}
	r.active.Add(-1)
	if p.mode == ModeConcurrency && !r.stopped.Load() && !(r.cfg.Adaptive != nil && r.shed()) {
		if ss, ok := r.takeSession(); ok {
			r.active.Add(1)
			if r.inline(s, r.firstItem(ss), now, 0, 0) {
				return true
			}
			r.active.Add(-1)
		}
	}
	r.outstanding.Add(-1)
	return false
}

// turnDue computes when a session's next turn nx is due after the previous
// turn j completed at now (run ns), and the session delay in it.
func (r *runner) turnDue(j *Job, nx int32, now int64) (due, sd int64) {
	p := r.p
	switch {
	case p.mode == ModeFixed && p.due[nx] >= 0:
		t := p.due[nx] + r.shift.Load()
		if now > t {
			return now, now - t
		}
		return t, 0
	case p.mode == ModeUserCentric:
		t := j.IntendedNS - r.wall0 + p.gap
		if d := p.delay[nx]; d >= 0 && now+d > t {
			return now + d, now + d - t
		}
		if now > t {
			return now, now - t
		}
		return t, 0
	case p.delay[nx] >= 0:
		return now + p.delay[nx], 0
	default:
		return now, 0
	}
}

// inline starts item on the sender that just completed a job.
func (r *runner) inline(s *sender, item int32, intended, sd int64, run uint64) bool {
	j := &s.job
	r.setJob(j, item, intended, sd, run)
	if !r.admit(j) {
		return false
	}
	j.Sender = int(s.id)
	j.DispatchedNS = r.wall0 + r.sl.now()
	j.Late = j.DispatchedNS-j.IntendedNS > int64(r.cfg.LateThreshold)
	r.st.record(j)
	return true
}

// completeDAG runs on the sender after Handle returned a job of a plan
// with dependencies: it releases the items whose last dependency this
// was. One released item that is due at once runs here on the same
// sender (returns true with s.job refilled); the others, or one due
// later, are posted to the dispatcher, which fires items with one due
// time in one batch (the children of one parent go out together). An
// item whose dependency failed is posted for skipDAG.
func (r *runner) completeDAG(s *sender) bool {
	j := &s.job
	p := r.p
	now := r.sl.now()
	r.st.completed.Add(1)
	item := int32(j.Item)
	failed := j.Failed
	rel := s.rel[:0]
	for e := p.succStart[item]; e < p.succStart[item+1]; e++ {
		c := p.succ[e]
		r.depIDs[p.succSlot[e]] = j.ID // before the decrement that may release c
		if failed {
			r.doomed[c].Store(true) // before the decrement that may release c
		}
		if r.pend[c].Add(-1) == 0 {
			r.relBy[c] = j.ID + 1 // read by the one dispatch of c, after the hand-over
			rel = append(rel, c)
		}
	}
	s.rel = rel[:0]
	r.taskDone(item)
	if len(rel) > 0 && !r.stopped.Load() {
		for _, c := range rel {
			if r.doomed[c].Load() {
				r.post(event{due: now, item: c, kind: evSkip})
				continue
			}
			due, sd := p.depDue(c, now, r.shift.Load())
			if len(rel) == 1 && due <= now {
				if r.inline(s, c, due, sd, j.SessionRun) {
					return true
				}
				break // the run stopped
			}
			r.post(event{due: due, sd: sd, run: j.SessionRun, item: c, kind: evTurn})
		}
	}
	r.outstanding.Add(-1)
	return false
}

// post hands e to the dispatcher (counted as outstanding until drained).
func (r *runner) post(e event) {
	r.outstanding.Add(1)
	for !r.posts.push(e) {
		runtime.Gosched() // the dispatcher drains it every wake-up
	}
}

// taskDone counts item done in its task; the task's session slot is
// released with its last item.
func (r *runner) taskDone(item int32) {
	if r.taskLeft[r.p.sessOf[item]].Add(-1) == 0 {
		r.active.Add(-1)
	}
}

// skipDAG records item as skipped and, through its dependents, every item
// that can no longer run: each is doomed and skipped once its last
// dependency is done. depFailed says why item itself is skipped (a
// dependency failed, else LateSkip). It runs on the dispatcher; false
// means the run stopped.
func (r *runner) skipDAG(item int32, intended int64, depFailed bool) bool {
	p := r.p
	r.blockedDue = math.MinInt64
	stack := append(r.skipStack[:0], item)
	first := true
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var j Job
		r.setJob(&j, it, intended, 0, uint64(p.sessOf[it])+1)
		if !r.admit(&j) {
			r.skipStack = stack[:0]
			return false
		}
		j.Skipped = true
		j.DepFailed = depFailed || !first
		first = false
		j.DispatchedNS = 0
		r.st.skipped.Add(1)
		if r.skipH != nil {
			r.skipH.Skip(&j)
		}
		if t := p.sessOf[it]; !r.taskStarted[t] {
			r.taskStarted[t] = true
			r.active.Add(1) // taskDone releases it with the task's last item
		}
		r.taskDone(it)
		for e := p.succStart[it]; e < p.succStart[it+1]; e++ {
			c := p.succ[e]
			r.depIDs[p.succSlot[e]] = j.ID
			r.doomed[c].Store(true)
			if r.pend[c].Add(-1) == 0 {
				stack = append(stack, c)
			}
		}
	}
	r.skipStack = stack[:0]
	return true
}

// The heap of dynamic events, ordered by due (dispatcher only).
func (r *runner) push(e event) {
	h := append(r.heap, e)
	i := len(h) - 1
	for i > 0 {
		up := (i - 1) / 2
		if h[up].due <= h[i].due {
			break
		}
		h[up], h[i] = h[i], h[up]
		i = up
	}
	r.heap = h
}

func (r *runner) pop() event {
	h := r.heap
	e := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if rr := l + 1; rr < len(h) && h[rr].due < h[l].due {
			m = rr
		}
		if h[i].due <= h[m].due {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	r.heap = h
	return e
}

// drain moves the senders' posted turns into the heap.
func (r *runner) drain() {
	for {
		e, ok := r.posts.pop()
		if !ok {
			return
		}
		r.push(e)
		r.outstanding.Add(-1)
	}
}

// source says where the next event comes from.
type source uint8

const (
	srcNone source = iota
	srcFixed
	srcTick
	srcHeap
)

// peek returns the next event's due time and source.
func (r *runner) peek() (int64, source) {
	p := r.p
	best, src := int64(math.MaxInt64), srcNone
	switch p.mode {
	case ModeFixed:
		if int64(r.fixedNext) < p.sessions() {
			due, ok := p.fixedDue(r.fixedNext)
			if !ok {
				r.stop("the trace could not be read")
				return best, srcNone
			}
			best, src = due+r.shift.Load(), srcFixed
		}
	case ModeRate:
		// Ticks are the only events; a due turn consumes a tick.
		return r.tickAt + r.shift.Load(), srcTick
	}
	if len(r.heap) > 0 && r.heap[0].due < best {
		best, src = r.heap[0].due, srcHeap
	}
	return best, src
}

// fireNext fires the event peek returned; a blocked event stays where it
// is (cursor, tick or heap) for the next attempt.
func (r *runner) fireNext(src source, due int64) fireResult {
	p := r.p
	switch src {
	case srcFixed:
		res := r.fire(p.fixedItem(r.fixedNext), due, 0, 0)
		if res != blocked {
			r.fixedNext++
		}
		return res
	case srcTick:
		res := r.tick(due)
		if res != blocked {
			r.tickX += r.gaps.next()
			r.tickAt = p.tickTime(r.tickX)
		}
		if res == exhausted {
			if len(r.heap) == 0 && r.outstanding.Load() == 0 {
				r.stop("end of trace")
				return stopped
			}
			return fired // only later turns are left; they take later ticks
		}
		return res
	case srcHeap:
		e := r.pop()
		var res fireResult
		switch e.kind {
		case evTurn:
			res = r.fire(e.item, e.due, e.sd, e.run)
		case evUser:
			res = r.fire(e.item, e.due, 0, 0)
			if res == fired {
				// A replacement user comes after this user's turns, open loop.
				turns := int64(0)
				for it := e.item; it >= 0; it = p.next[it] {
					turns++
				}
				if ns, ok := r.takeSession(); ok {
					r.push(event{due: e.due + max(1, turns)*p.gap, item: r.firstItem(ns), kind: evUser})
				}
			}
		case evSkip:
			res = fired
			if !r.skipDAG(e.item, e.due, true) {
				res = stopped
			}
		default: // evSession
			res = r.fire(noItem, e.due, 0, 0)
			if res == exhausted {
				res = fired // nothing left to start; running sessions finish
			}
		}
		if res == blocked {
			r.push(e)
		}
		return res
	}
	return stopped
}

// tick fires one rate-mode tick: a due later turn takes it first, else a
// new session starts (AIPerf semantics).
//
// A tick blocked on a session slot is retried as time passes; a turn that
// becomes due meanwhile takes it (at the turn's own due time), since the
// session waiting for that turn may hold the slot.
func (r *runner) tick(due int64) fireResult {
	if len(r.heap) > 0 && r.heap[0].due <= max(due, r.sl.now()) {
		e := r.pop()
		res := r.fire(e.item, max(due, e.due), 0, e.run)
		if res == blocked {
			r.push(e)
		}
		return res
	}
	c := r.cfg
	if c.Concurrency > 0 && r.active.Load() >= int64(c.Concurrency) && c.Late == LateSkip {
		r.st.skipped.Add(1) // the tick is dropped; no session is consumed
		return fired
	}
	return r.fire(noItem, due, 0, 0)
}

// fireDueTurns fires the due later turns in the heap while a new session
// waits for a slot: they need no slot, and the sessions holding the slots
// may be waiting for exactly them. Other due events go back to the heap.
func (r *runner) fireDueTurns() {
	if r.p.mode == ModeRate {
		return // turns take ticks there
	}
	now := r.sl.now()
	held := r.scratch[:0]
	for len(r.heap) > 0 && r.heap[0].due <= now {
		e := r.pop()
		if e.kind == evTurn && r.fire(e.item, e.due, e.sd, e.run) != blocked {
			continue
		}
		held = append(held, e)
	}
	for _, e := range held {
		r.push(e)
	}
	r.scratch = held[:0]
}

// dispatch is the dispatcher loop. It returns ctx's error on cancellation.
func (r *runner) dispatch(ctx context.Context, cancel context.CancelFunc) error {
	c := r.cfg
	// late is how far past its time zero the schedule starts (a StartAt
	// already past): the wall-clock bound of a duration moves by as much,
	// so what fell due within the duration still goes out, late, and the
	// rows due after it stop the run as they come (fireNext).
	late := max(r.sl.now(), 0)
	if c.Duration > 0 && c.WarmupRequests == 0 {
		r.stopAt = int64(c.WarmupDuration + c.Duration)
	}
	for {
		if ctx.Err() != nil {
			r.stop("cancelled")
			break
		}
		r.drain()
		if r.stopped.Load() {
			break
		}
		if c.Adaptive != nil {
			r.follow()
		}
		now := r.sl.now()
		stopAt := r.stopAt
		if at := r.profileAt.Load(); c.Duration > 0 && at >= 0 {
			stopAt = at + int64(c.Duration)
		}
		if stopAt > 0 {
			stopAt += late
		}
		if c.Duration > 0 && stopAt > 0 && now >= stopAt {
			r.stop("duration reached")
			break
		}
		t, src := r.peek()
		if src == srcNone {
			if r.outstanding.Load() == 0 && len(r.heap) == 0 {
				if r.p.mode == ModeFixed || !r.p.synthetic() {
					r.stop("end of trace")
				} else {
					r.stop("nothing left to send")
				}
				break
			}
			// Only completions can come: poll for them (finely only when
			// they may carry a later turn).
			step := int64(time.Millisecond)
			if r.dynamic {
				step = int64(pollInterval)
			}
			r.sl.nap(now + step)
			continue
		}
		wake := t
		if r.dynamic && r.outstanding.Load() > 0 {
			wake = min(wake, now+int64(pollInterval))
		}
		wake = min(wake, now+int64(maxNap))
		if c.Duration > 0 && stopAt > 0 {
			wake = min(wake, stopAt)
		}
		if wake < t {
			r.sl.nap(wake)
			continue
		}
		r.sl.sleepUntil(t)
		// Fire everything due now: a batch of equal timestamps goes out
		// together, each job stamped with its own dispatch time.
		for src != srcNone && t <= r.sl.now() {
			res := r.fireNext(src, t)
			if res == blocked {
				if r.blockedSlot {
					r.fireDueTurns()
				}
				r.sl.nap(r.sl.now() + int64(waitInterval))
				break
			}
			if res == stopped {
				break
			}
			r.drain()
			t, src = r.peek()
		}
	}
	// Drain: wait for in-flight jobs; with Duration, cancel them at the
	// end of grace.
	graceEnd := int64(math.MaxInt64)
	if c.Duration > 0 {
		end := r.sl.now()
		if at := r.profileAt.Load(); at >= 0 {
			end = at + int64(c.Duration)
		}
		graceEnd = end + int64(c.Grace)
	}
	cancelled := false
	for {
		for {
			if _, ok := r.posts.pop(); !ok {
				break
			}
			r.outstanding.Add(-1) // the run stopped: later turns are not sent
		}
		if r.outstanding.Load() == 0 {
			break
		}
		now := r.sl.now()
		if !cancelled && (now >= graceEnd || ctx.Err() != nil) {
			cancel()
			cancelled = true
		}
		r.sl.nap(min(now+int64(time.Millisecond), max(graceEnd, now+1)))
	}
	return ctx.Err()
}

func (r *runner) stats() Stats {
	st := r.st
	s := Stats{
		Mode:              r.p.mode,
		Dispatched:        st.count.Load(),
		Warmup:            st.warmup.Load(),
		Completed:         st.completed.Load(),
		Late:              st.late.Load(),
		Waited:            st.waited.Load(),
		Shifted:           st.shifted.Load(),
		Skipped:           st.skipped.Load(),
		Shift:             time.Duration(r.shift.Load()),
		Lateness:          st.lateness(),
		SessionDelayTotal: time.Duration(st.sdTotal.Load()),
		SessionDelayMax:   time.Duration(st.sdMax.Load()),
		SpinWindow:        r.sl.spinWindow(),
		MaxLateness:       r.cfg.MaxLateness,
	}
	if reason := r.stopReason.Load(); reason != nil {
		s.StopReason = *reason
	}
	s.IntendedRate = rate(s.Dispatched, st.firstIntent.Load(), st.lastIntent.Load())
	s.AchievedRate = rate(s.Dispatched, st.firstDisp.Load(), st.lastDisp.Load())
	s.LatenessBudgetExceeded = r.cfg.MaxLateness > 0 && s.Lateness.P99 > r.cfg.MaxLateness
	return s
}

// startControl runs the controller's goroutine: Assess at every period
// from time zero, until the run stops.
func (r *runner) startControl() {
	a := r.cfg.Adaptive
	if a == nil {
		return
	}
	r.level.Store(int64(a.Start))
	r.every(a.Period, func(now int64) bool {
		level, stop := a.Assess(now)
		r.level.Store(int64(min(max(level, 1), r.cfg.Concurrency)))
		if stop {
			r.stop("adaptive scale done")
		}
		return stop
	})
}

// startWatch runs the watch's goroutine: Check at every period from
// time zero, until it stops the run or the run stops.
func (r *runner) startWatch() {
	w := r.cfg.Watch
	if w == nil {
		return
	}
	r.every(w.Period, func(now int64) bool {
		stop, reason := w.Check(now)
		if stop {
			r.stop(reason)
		}
		return stop
	})
}

// every calls f with the wall clock at every period from time zero
// (absolute deadlines, so the windows do not drift) on a goroutine of
// its own, until f returns true or the run stops.
func (r *runner) every(period time.Duration, f func(now int64) bool) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for k := int64(1); ; k++ {
			t.Reset(time.Duration(k*int64(period) - r.sl.now()))
			select {
			case <-t.C:
			case <-r.quit:
				return
			}
			if r.stopped.Load() || f(r.wall0+r.sl.now()) {
				return
			}
		}
	}()
}

// follow starts the sessions a raised level asks for (dispatcher only).
// chains counts the closed loop's sessions: those in flight and those
// waiting in the heap to start.
func (r *runner) follow() {
	for r.chains.Load() < r.level.Load() {
		r.chains.Add(1)
		r.push(event{due: r.sl.now(), kind: evSession})
	}
}

// shed ends a session's chain when the level fell below the chains
// (senders, at a session's end); true means the session is not
// replaced.
func (r *runner) shed() bool {
	for {
		c := r.chains.Load()
		if c <= r.level.Load() {
			return false
		}
		if r.chains.CompareAndSwap(c, c-1) {
			return true
		}
	}
}
