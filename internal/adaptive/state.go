package adaptive

// The events of adaptive_scale_events.jsonl, AIPerf's names
// (docs/format/adaptive-scale.md).
const (
	EventStarted        = "adaptive_phase_started" // the run starts at Min
	EventWindow         = "adaptive_window"        // a window that changed nothing
	EventDecision       = "adaptive_decision"      // the setting changed
	EventSustainStarted = "sustain_started"        // the boundary was found; it is held from now on
	EventComplete       = "adaptive_complete"      // the boundary held for the sustain duration
	EventIncomplete     = "adaptive_incomplete"    // the run ended before the controller did
	EventFailed         = "adaptive_failed"        // no setting held, or the boundary failed twice
)

// The statuses of the summary.
const (
	StatusRunning    = "running"
	StatusComplete   = "complete"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
)

// The controller's phases.
const (
	phaseDiscover = "discover"
	phaseSustain  = "sustain"
	phaseDone     = "done"
)

// Decision is what the [Controller] did with one window.
type Decision struct {
	// Event is one of the Event constants.
	Event string
	// Before and After are the setting during the window and from now
	// on.
	Before, After int
	// Reason says why, in AIPerf's words where it has them
	// ("no_sustainable_concurrency_found").
	Reason string
	// Done: the controller is finished and the run should end.
	Done bool
}

// Controller decides the next setting from each window's verdict. It
// starts at Config.Min and, while windows pass, doubles the setting (up
// to Max); after the first failure it bisects between the highest
// setting that passed and the lowest that failed until they are
// adjacent, then holds the one that passed (the boundary) for
// Config.Sustain. A failed window while it holds lowers the setting by
// one, once; a second failure ends the run as failed. It is pure (times
// are arguments) and not safe for concurrent use.
type Controller struct {
	cfg       Config
	phase     string
	cur       int
	lastPass  int // highest setting that passed; 0 = none
	firstFail int // lowest setting that failed; 0 = none
	boundary  int
	sustainAt int64
	recovered bool
	status    string
	reason    string
}

// NewController returns a controller at cfg.Min; cfg must be valid.
func NewController(cfg Config) *Controller {
	return &Controller{cfg: cfg, phase: phaseDiscover, cur: cfg.Min, status: StatusRunning}
}

// Setting returns the current setting.
func (c *Controller) Setting() int { return c.cur }

// Step takes the verdict of the window that ended at nowNS (ns on any
// clock, the same for every call) and returns the decision.
func (c *Controller) Step(v Verdict, nowNS int64) Decision {
	d := Decision{Event: EventWindow, Before: c.cur, After: c.cur}
	switch {
	case c.phase == phaseDone:
		d.Done, d.Reason = true, c.reason
	case !v.Conclusive:
		d.Reason = "inconclusive: too few completed requests, or a metric missing"
	case c.phase == phaseDiscover && v.Pass:
		c.lastPass = max(c.lastPass, c.cur)
		c.discover(&d, nowNS, "passes")
	case c.phase == phaseDiscover:
		if c.lastPass == 0 {
			c.finish(&d, StatusFailed, EventFailed, "no_sustainable_concurrency_found")
			break
		}
		if c.firstFail == 0 || c.cur < c.firstFail {
			c.firstFail = c.cur
		}
		c.discover(&d, nowNS, "fails")
	case v.Pass:
		if nowNS-c.sustainAt >= int64(c.cfg.Sustain) {
			c.finish(&d, StatusComplete, EventComplete, "sustain_duration_completed")
		}
	case c.recovered || c.cur == c.cfg.Min:
		c.finish(&d, StatusFailed, EventFailed, "sustain_failed_after_recovery")
	default:
		c.recovered = true
		c.cur--
		c.boundary = c.cur
		d.Event, d.After, d.Reason = EventDecision, c.cur, "the boundary fails while held: one step down"
	}
	return d
}

// discover moves the setting after a window of the discovery phase:
// doubling until a failure, then bisecting, then holding.
func (c *Controller) discover(d *Decision, nowNS int64, how string) {
	next := min(2*c.cur, c.cfg.Max)
	if c.firstFail > 0 {
		next = (c.lastPass + c.firstFail) / 2
	}
	switch {
	case c.firstFail == 0 && c.cur >= c.cfg.Max:
		c.boundary = c.cur
		c.finish(d, StatusIncomplete, EventIncomplete, "max_control_value_reached_without_saturation")
		return
	case c.firstFail > 0 && c.firstFail-c.lastPass <= 1:
		c.phase, c.boundary, c.cur, c.sustainAt = phaseSustain, c.lastPass, c.lastPass, nowNS
		d.Event, d.After, d.Reason = EventSustainStarted, c.cur, "boundary found: holding the highest setting that passed"
		return
	}
	c.cur = next
	d.Event, d.After, d.Reason = EventDecision, next, "the window "+how+" its SLAs"
}

func (c *Controller) finish(d *Decision, status, event, reason string) {
	c.phase, c.status, c.reason = phaseDone, status, reason
	d.Event, d.Reason, d.Done = event, reason, true
}

// End marks a controller the run ended before it finished (the run's
// duration, an interruption) as incomplete.
func (c *Controller) End(reason string) {
	if c.phase != phaseDone {
		c.phase, c.status, c.reason = phaseDone, StatusIncomplete, reason
	}
}

// Outcome is the controller's state as the summary reports it.
type Outcome struct {
	Status string `json:"status"`
	Reason string `json:"completed_reason,omitempty"`
	// Boundary is the setting found (0: none yet); Setting the last.
	Boundary  int `json:"boundary_value"`
	Setting   int `json:"control_value"`
	LastPass  int `json:"last_passing_value"`
	FirstFail int `json:"first_failing_value"`
	// Sustained reports that the boundary held for the sustain duration.
	Sustained bool `json:"sustain_completed"`
}

// Outcome returns the controller's state.
func (c *Controller) Outcome() Outcome {
	return Outcome{Status: c.status, Reason: c.reason, Boundary: c.boundary, Setting: c.cur, LastPass: c.lastPass,
		FirstFail: c.firstFail, Sustained: c.status == StatusComplete}
}
