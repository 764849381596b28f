package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace"
)

// ContextMode decides which turns of a multi-turn session are sent with
// the session's history (docs/reference/aiperf.md §1).
type ContextMode string

// The context modes.
const (
	// ContextAuto follows the trace format: rows whose input length
	// already holds the history (trace.Row.Cumulative: Bailian, Mooncake
	// messages/payload rows, AIPerf single_turn rows with a session id)
	// are self-contained; the other rows of a session (Mooncake/AIPerf
	// rows with a session_id, whose input_length is the new turn's tokens)
	// grow the history as AIPerf's deltas_without_responses does.
	ContextAuto ContextMode = "auto"
	// ContextHistory grows the history of every session row that can take
	// one: all but complete requests (messages, payload). Rows whose
	// synthesized length is cumulative (Bailian) are refused: their
	// history would be counted twice.
	ContextHistory ContextMode = "history"
	// ContextSelfContained sends every row as it stands: no history.
	ContextSelfContained ContextMode = "self-contained"
)

// DefaultContextMode is the default of RunConfig.Context.
const DefaultContextMode = ContextAuto

// MaxHistoryResponse bounds the response text of one turn kept in a
// session's history (bytes); a longer response is cut at a character
// boundary and counted in Result.HistoryTruncated.
const MaxHistoryResponse = 1 << 20

// SessionPromptSource is a [PromptSource] that can also build the later
// turns of a multi-turn session with the session's history. The engine
// needs one when the context mode grows histories.
type SessionPromptSource interface {
	PromptSource
	// NewSession returns an empty history for one run of one session.
	NewSession() SessionPrompts
}

// SessionPrompts builds the turns of one session run, one after another:
// the engine never calls it from two goroutines at once, and each call
// happens after the previous one returned.
type SessionPrompts interface {
	// Prompt builds row, the next turn, with the history recorded so
	// far: in.PromptText (and in.PromptTokens, for token-id prompts) get
	// the whole conversation as one completions prompt and in.Messages
	// the conversation as chat messages (earlier user prompts and
	// assistant responses alternating, then row's prompt as the last user
	// message). It returns the tokens of the whole prompt (history
	// included) and the tokens a prefix cache holds of it (-1 unknown).
	Prompt(row *trace.Row, in *adapter.BuildInput) (inputTokens, expectedCached int, err error)
	// Record appends row's prompt and the assistant's response to the
	// history. row is the turn last built by Prompt, or a first turn the
	// engine built ahead with PromptSource.Prompt.
	Record(row *trace.Row, response string) error
}

// Roles of a trace row in history growth (bits).
const (
	roleFirst   uint8 = 1 << iota // first turn of a session that grows history: built ahead, starts a history
	roleLater                     // a later turn: built on the send path, with the history
	roleCapture                   // a later turn needs this turn's response
)

// Validate reports an unknown mode.
func (m ContextMode) Validate() error {
	switch m {
	case "", ContextAuto, ContextHistory, ContextSelfContained:
		return nil
	}
	return fmt.Errorf("context mode %q: want %s, %s or %s", string(m), ContextAuto, ContextHistory, ContextSelfContained)
}

// Check reports, for ContextHistory, every session row whose history
// cannot be grown (at most 5, then a count): Bailian-style rows, whose
// synthesized input length already includes the history, and rows that
// are complete requests (messages, payload). Other modes accept any trace.
func (m ContextMode) Check(rows []trace.Row) error {
	c := m.Checker()
	for i := range rows {
		c.Add(&rows[i])
	}
	return c.Err()
}

// ContextChecker is [ContextMode.Check] one row at a time, for a trace
// read as a stream. It keeps nothing of the rows but the first few
// problems.
type ContextChecker struct {
	m    ContextMode
	errs []error
	bad  int
}

// Checker returns a ContextChecker for m.
func (m ContextMode) Checker() *ContextChecker { return &ContextChecker{m: m} }

// Add checks row.
func (c *ContextChecker) Add(r *trace.Row) {
	if c.m != ContextHistory || r.SessionID == "" {
		return
	}
	var why string
	switch {
	case completeRequest(r):
		why = "carries a complete request (messages or payload), which is sent as it is"
	case r.Cumulative && len(r.Raw) == 0:
		why = "has an input_length that already includes the session's history (Bailian), so appending it would count it twice"
	default:
		return
	}
	c.bad++
	if len(c.errs) < 5 {
		c.errs = append(c.errs, fmt.Errorf("row %d (line %d) of session %q %s", r.Index, r.Line, r.SessionID, why))
	}
}

// Err returns what Check would for the rows added.
func (c *ContextChecker) Err() error {
	if err := c.m.Validate(); err != nil {
		return err
	}
	if c.bad == 0 {
		return nil
	}
	errs := c.errs
	if c.bad > len(errs) {
		errs = append(errs, fmt.Errorf("%d more such rows", c.bad-len(errs)))
	}
	return &HistoryError{Err: errors.Join(errs...)}
}

// HistoryError reports, for ContextHistory, the session rows whose history
// cannot be grown (Err, one row a line).
type HistoryError struct {
	Err error
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("context mode history: %v; use context mode auto (each row as its format means it) or self-contained", e.Err)
}

// Unwrap returns the rows' problems.
func (e *HistoryError) Unwrap() error { return e.Err }

// Grows reports whether row, a row of a session, takes part in history
// growth under m (whether it is then the first turn or a later one
// depends on the other rows of its session).
func (m ContextMode) Grows(row *trace.Row) bool {
	if row.SessionID == "" {
		return false
	}
	switch m {
	case ContextSelfContained:
		return false
	case ContextHistory:
		return !completeRequest(row) && !(row.Cumulative && len(row.Raw) == 0)
	default:
		return !row.Cumulative && !completeRequest(row)
	}
}

// completeRequest reports whether the row carries messages or a payload.
func completeRequest(row *trace.Row) bool {
	if len(row.Raw) == 0 {
		return false
	}
	var raw struct {
		Messages json.RawMessage `json:"messages"`
		Payload  json.RawMessage `json:"payload"`
	}
	if json.Unmarshal(row.Raw, &raw) != nil {
		return false
	}
	return isJSONSet(raw.Messages) || isJSONSet(raw.Payload)
}

func isJSONSet(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }

// histories holds the roles of the trace's rows and the live histories of
// the session runs in flight.
type histories struct {
	roles     []uint8 // by item
	src       SessionPromptSource
	mu        sync.Mutex
	live      map[uint64]*history // by replay.Job.SessionRun
	truncated atomic.Int64
	builds    atomic.Int64
	warn      sync.Once
	log       *slog.Logger
}

type history struct {
	sp SessionPrompts
}

// newHistories resolves the roles of rows under mode; nil when no row
// grows a history (then nothing changes for any request).
func newHistories(mode ContextMode, rows []trace.Row, src PromptSource, log *slog.Logger) (*histories, error) {
	if mode == "" {
		mode = DefaultContextMode
	}
	if err := mode.Check(rows); err != nil {
		return nil, err
	}
	// Sessions in the scheduler's order: rows by SessionID, by Turn, then
	// by position.
	bySession := map[string][]int{}
	var order []string
	for i := range rows {
		if !mode.Grows(&rows[i]) {
			continue
		}
		id := rows[i].SessionID
		if _, ok := bySession[id]; !ok {
			order = append(order, id)
		}
		bySession[id] = append(bySession[id], i)
	}
	var roles []uint8
	for _, id := range order {
		items := bySession[id]
		if len(items) < 2 {
			continue
		}
		if roles == nil {
			roles = make([]uint8, len(rows))
		}
		slices.SortStableFunc(items, func(a, b int) int { return rows[a].Turn - rows[b].Turn })
		for k, it := range items {
			if k == 0 {
				roles[it] = roleFirst
			} else {
				roles[it] = roleLater
			}
			if k+1 < len(items) {
				roles[it] |= roleCapture
			}
		}
	}
	if roles == nil {
		return nil, nil
	}
	ss, ok := src.(SessionPromptSource)
	if !ok {
		return nil, fmt.Errorf("context mode %s: the trace has multi-turn sessions that grow their history, but the prompt source cannot build them; use context mode self-contained", mode)
	}
	return &histories{roles: roles, src: ss, live: map[uint64]*history{}, log: log}, nil
}

// role returns item's role (0 when h is nil or item is out of range).
func (h *histories) role(item int) uint8 {
	if h == nil || item < 0 || item >= len(h.roles) {
		return 0
	}
	return h.roles[item]
}

// get returns the history of session run run, a new one when first is
// set or when none is live (a run that starts at a later turn).
func (h *histories) get(run uint64, first bool) *history {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.live[run]
	if s == nil || first {
		s = &history{sp: h.src.NewSession()}
		h.live[run] = s
	}
	return s
}

// done forgets the history of run (its last turn completed).
func (h *histories) done(run uint64) {
	h.mu.Lock()
	delete(h.live, run)
	h.mu.Unlock()
}

// response bounds a captured response for the history.
func (h *histories) response(text []byte) string {
	if len(text) <= MaxHistoryResponse {
		return string(text)
	}
	h.truncated.Add(1)
	h.warn.Do(func() {
		h.log.Warn("a response kept in a session's history was cut", slog.Int("max_bytes", MaxHistoryResponse))
	})
	i := MaxHistoryResponse
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return string(text[:i])
}
