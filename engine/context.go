package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/trace"
)

// PromptSource synthesizes the prompt of a row: it fills in.PromptText
// and/or in.PromptTokens and returns the prompt's length in client
// tokens and the tokens the row's prefix structure lets a server reuse
// (-1 unknown). It must be safe for concurrent use; it runs on the
// builder goroutines, ahead of the send time.
type PromptSource interface {
	Prompt(row *trace.Row, in *adapter.BuildInput) (inputTokens, expectedCached int, err error)
}

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

// DefaultContextMode is the default context mode of a run
// (reprise.PromptOptions.ContextMode).
const DefaultContextMode = ContextAuto

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
