// Package replay owns time in reprise: it turns a trace or a load model
// into intended send times and fires every request at its time with
// microsecond precision, recording for each when it was meant to go
// ([Job.IntendedNS]) and when it went ([Job.DispatchedNS]). It imports no
// net/http: the engine supplies a [Handler] that runs one request.
//
// # Use
//
// Build a [Config] with [NewConfig], plan it against the trace with
// [NewPlan], which reports every configuration and trace problem at once
// before anything is sent (each a [*FieldError] naming the Config field
// to change), then call [Plan.Run] with the handler:
//
//	cfg := replay.NewConfig()
//	cfg.RequestRate = 50
//	plan, err := replay.NewPlan(cfg, rows) // rows from trace.ReadAll; nil = synthetic load
//	if err != nil { return err }
//	stats, err := plan.Run(ctx, handler)  // handler.Handle(ctx, *Job) runs one request
//	if err := stats.Check(); err != nil { /* over the lateness budget */ }
//
// A trace too large to hold is planned without its rows: a first pass
// feeds every row to a [Survey], [NewStreamPlan] checks it as NewPlan
// would, and the run reads the trace again through a [trace.Window]
// ([Plan.Window]) a few thousand rows ahead of the dispatcher. Sorted
// traces of independent requests qualify ([Survey.Streamable]); multi-turn
// sessions and unsorted rows are loaded (design 0006).
//
// # Timing modes
//
// [ModeFixed] replays trace timestamps: time zero is the first timestamp
// (AutoOffset) or StartOffset, trace time is divided by Speedup, rows
// outside [StartOffset, EndOffset] are dropped, and rows sharing a
// timestamp go out together, each with its own dispatch stamp.
// A later turn of a session is due at its own timestamp, or its delay
// after the previous turn completed, or at once, and never before the
// previous turn completed; the part of the wait caused by that turn is
// [Job.SessionDelayNS], apart from lateness.
//
// [ModeRate] issues RequestRate ticks (constant, Poisson or gamma gaps
// with Smoothness as the shape; seeded), optionally ramped linearly over
// RateRamp; a session's next turn whose delay has elapsed takes the next
// tick (AIPerf semantics), otherwise a tick starts a new session.
// [ModeConcurrency] keeps Concurrency sessions in flight (closed loop),
// raised from 1 over ConcurrencyRamp. [ModeUserCentric] runs NumUsers
// users at a total UserCentricRate with AIPerf's warm start. Concurrency
// also caps sessions in flight in the open-loop modes: a session waiting
// for a slot is late and says so ([Job.Waited]).
//
// Runs stop at RequestCount measured requests, at Duration (then
// in-flight requests get Grace before their context is cancelled), or at
// the end of the trace. WarmupRequests or WarmupDuration mark a prefix of
// the run as warmup ([record.PhaseWarmup]), excluded from [Stats]. When
// the dispatcher is behind by more than LateThreshold, the Late policy
// [LateBurst] sends at once, [LateShift] moves the rest of the schedule,
// [LateSkip] drops the request (reported to a [SkipHandler]); [Stats]
// counts each.
//
// # Shards and a common start
//
// [Config.Shard] makes a plan one part of a workload split over several
// processes: whole sessions of a trace, dealt in start order to the shard
// with the fewest requests so far, and the load model's budgets divided
// ([Config.Share], which also says what holds for each arrival pattern).
// [Config.StartAt] anchors the run's time zero at a wall-clock instant,
// so processes given the same one share a timeline (design 0012).
// Without it, time zero is when the run is ready to dispatch: after its
// senders started and the dispatcher's thread was set up, so a request
// due at zero is not late by the set-up.
//
// # Performance considerations
//
// The dispatcher is the goroutine that calls [Plan.Run], locked to its OS
// thread with the thread's timer slack set to 1 ns. It sleeps with
// clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) until a spin window
// before each deadline and spins on the vDSO clock for the rest; the
// window follows the measured wake-up error (its 0.8 quantile plus 3 µs,
// between 5 and 50 µs). Go's
// own timers wake up to a millisecond late (netpoll granularity), which
// is why they are not used. Every deadline is absolute (start + offset),
// never a chain of relative sleeps. [Preflight] measures this primitive on
// the host for the run's manifest.
//
// The dispatcher never runs a request. It hands jobs to a fixed set of
// long-lived sender goroutines ([Config.Senders]): it pops an idle sender from a
// lock-free stack (the one freed last), writes the job into that sender's mailbox and wakes it
// with a token on a 1-buffered channel. No goroutine is started and
// nothing is allocated per job (TestDispatchAllocs), and no mutex is
// taken. When no sender or session slot is free the dispatcher does not
// wait inside the hand-off: the event is retried after 50 µs naps while
// everything else (due later turns, stop conditions) goes on, and the job
// finally sent is marked [Job.Waited] and, usually, late. Size Senders
// for the most requests in flight you expect (rate × latency).
//
// A sender that completes a session turn whose successor is already due
// runs it at once itself; a later successor is posted to the dispatcher
// through a second lock-free ring. While such work may arrive, the
// dispatcher bounds its sleeps to 200 µs so it sees it, which costs a few
// thousand wake-ups per second and can make a delayed turn due within
// 200 µs of its predecessor's completion up to 200 µs late.
//
// The spin costs CPU: about (window − typical wake-up error) × rate;
// [Stats.SpinShare] and [Stats.DispatcherCPU] report it. vCPU
// preemption on shared hosts causes rare millisecond-scale lateness that
// no user-space technique prevents; it shows in [Stats.Lateness] Max and,
// with MaxLateness, in [Stats.Check].
//
// Every time of a run is on one [Clock]: the wall clock read once at its
// start plus monotonic elapsed time. [Plan.RunOnClock] takes the clock the
// caller stamps its own times with (the engine's, which also stamps
// telemetry samples), and each job carries it ([Job.NowNS]), so every
// stamp of a request is on one clock and differences are exact. Reading it
// allocates nothing. The precision sleeping primitive the dispatcher waits
// with is internal to the package.
package replay
