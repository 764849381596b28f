package reprise

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// preamble is what goes before every request's messages of a conversation
// on a file's rows: AIPerf's shared system prompt and user context prompt
// (PromptOptions.SharedSystemTokens, UserContextTokens). The zero value
// adds nothing.
type preamble struct {
	system        string // the shared system prompt, made once
	systemTokens  int
	contextTokens int
}

// Key domains of the preamble's texts (prompt.Builder.Words keys).
const (
	preSystemKey  = 0x7379732d70726f6d // "sys-prom"
	preContextKey = 0x7573722d636f6e74 // "usr-cont"
)

// on reports whether the preamble adds messages.
func (pr *preamble) on() bool { return pr.systemTokens > 0 || pr.contextTokens > 0 }

// newPreamble makes o's preamble with the prompt builder of sp.
func newPreamble(o *Options, sp *promptSource) preamble {
	pr := preamble{systemTokens: o.Prompts.SharedSystemTokens, contextTokens: o.Prompts.UserContextTokens}
	if pr.systemTokens > 0 {
		pr.system = sp.s.Words(preSystemKey, pr.systemTokens)
	}
	return pr
}

// conversationKey identifies row's conversation for its user context: its
// session in the dataset (a session drawn again, "id#k", is the same
// dataset entry and keeps its context, as in AIPerf, where the context
// belongs to the dataset's conversation), or the row itself without one.
func conversationKey(row *trace.Row) uint64 {
	id := row.SessionID
	if id == "" {
		return uint64(row.Index)<<1 | 1
	}
	if i := strings.LastIndexByte(id, '#'); i > 0 && isDigits(id[i+1:]) {
		id = id[:i]
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64() &^ 1
}

func isDigits(s string) bool {
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// prepend returns msgs (the conversation of one request, its last message
// the row's own) with row's conversation's preamble before them, and the
// preamble's tokens. The result is a new slice.
func (pr *preamble) prepend(sp *promptSource, row *trace.Row, msgs []adapter.Message) ([]adapter.Message, int) {
	out := make([]adapter.Message, 0, len(msgs)+2)
	n := 0
	if pr.systemTokens > 0 {
		out = append(out, adapter.Message{Role: "system", Content: pr.system})
		n += pr.systemTokens
	}
	if pr.contextTokens > 0 {
		out = append(out, adapter.Message{Role: "user", Content: sp.s.Words(preContextKey^conversationKey(row), pr.contextTokens)})
		n += pr.contextTokens
	}
	return append(out, msgs...), n
}

// preambleProblems reports the problems of o's conversation prompts
// (PromptOptions.SharedSystemTokens, UserContextTokens): they go with a
// trace's rows, to a chat or Responses endpoint.
func preambleProblems(o *Options, bad func(path, format string, args ...any)) {
	p := &o.Prompts
	if p.SharedSystemTokens == 0 && p.UserContextTokens == 0 {
		return
	}
	switch {
	case p.SharedSystemTokens < 0 || p.UserContextTokens < 0:
		bad("Prompts.SharedSystemTokens", "{Prompts.SharedSystemTokens} %d and {Prompts.UserContextTokens} %d: want tokens ≥ 0", p.SharedSystemTokens, p.UserContextTokens)
	case syntheticLoad(o):
		bad("Prompts.SharedSystemTokens", "{Prompts.SharedSystemTokens} and {Prompts.UserContextTokens} go before a trace's rows; a synthetic load's are {Synthetic.SharedPrefix} and {Synthetic.UserContext}")
	case o.Endpoint != "" && o.Endpoint != "chat" && o.Endpoint != "responses":
		bad("Prompts.SharedSystemTokens", "{Prompts.SharedSystemTokens} and {Prompts.UserContextTokens} are chat messages: endpoint %s has none (use chat or responses)", o.Endpoint)
	case p.SharedSystemTokens+p.UserContextTokens > o.Trace.MaxInputTokens:
		bad("Prompts.SharedSystemTokens", "{Prompts.SharedSystemTokens} %d + {Prompts.UserContextTokens} %d: over the cap of %d input tokens ({Trace.MaxInputTokens})", p.SharedSystemTokens, p.UserContextTokens, o.Trace.MaxInputTokens)
	}
}

// preambleRows reports the rows (at most 5, then a count) the conversation
// prompts cannot go before: rows synthesized from their lengths (their
// hash ids say what they share) and rows carrying a complete request
// (messages, payload), which are sent as they are.
func preambleRows(path string, rows []trace.Row) error {
	var errs []error
	bad := 0
	for i := range rows {
		r := &rows[i]
		var raw struct {
			TextInput json.RawMessage `json:"text_input"`
			Messages  json.RawMessage `json:"messages"`
			Payload   json.RawMessage `json:"payload"`
			Media     json.RawMessage `json:"media"`
		}
		why := ""
		switch {
		case len(r.Raw) == 0:
			why = "is synthesized from its lengths, not a text of its own"
		case json.Unmarshal(r.Raw, &raw) != nil:
			why = "has unreadable content"
		case raw.Messages != nil || raw.Payload != nil:
			why = "carries a complete request (messages or payload), which is sent as it is"
		case raw.TextInput == nil && raw.Media == nil:
			why = "has no text of its own"
		default:
			continue
		}
		if bad++; bad <= 5 {
			errs = append(errs, fmt.Errorf("%s: line %d: the row %s", path, r.Line, why))
		}
	}
	if bad == 0 {
		return nil
	}
	if bad > 5 {
		errs = append(errs, fmt.Errorf("… and %d more rows", bad-5))
	}
	return fmt.Errorf("the shared system and user context prompts go before rows with a text of their own (AIPerf single_turn, multi_turn, prompt files, ShareGPT): %w", errors.Join(errs...))
}

// entriesProblems reports the problems of Trace.Entries and
// Trace.Sessions: counts of a trace's entries, not with a fixed schedule
// (every row goes once, at its time).
func entriesProblems(o *Options, bad func(path, format string, args ...any)) {
	t := &o.Trace
	if t.Entries == 0 && t.Sessions == 0 {
		return
	}
	switch {
	case t.Entries < 0 || t.Sessions < 0:
		bad("Trace.Entries", "{Trace.Entries} %d and {Trace.Sessions} %d: want counts ≥ 0", t.Entries, t.Sessions)
	case syntheticLoad(o):
		bad("Trace.Entries", "{Trace.Entries} and {Trace.Sessions} take entries of a trace; a synthetic load's are {Synthetic.Entries} and {Synthetic.Sessions}")
	case t.Sessions > 0 && o.Replay.Mode == replay.ModeFixed:
		bad("Trace.Sessions", "{Trace.Sessions} draws sessions again, which a fixed schedule cannot (each row goes once, at its timestamp); pace the file by a load instead, or take fewer entries with {Trace.Entries}")
	}
}

// takeEntries applies Trace.Entries and Trace.Sessions to a trace's rows
// (held whole): the first Entries entries, then Sessions of them drawn in
// the sampling order.
func takeEntries(o *Options, rows []trace.Row) []trace.Row {
	if o.Trace.Entries > 0 {
		rows = trace.FirstEntries(rows, o.Trace.Entries)
	}
	if o.Trace.Sessions > 0 {
		sm, _ := trace.ParseSampling(o.Trace.Sampling)
		rows = trace.SampleEntries(rows, sm, o.Replay.Seed, o.Trace.Sessions)
	}
	return rows
}

// holdNote says why o's trace is held whole for its entries or its
// conversation prompts, or "".
func holdNote(o *Options) string {
	switch {
	case o.Trace.Entries > 0 || o.Trace.Sessions > 0:
		return "the dataset's entries are counted and drawn from all rows"
	case o.Prompts.SharedSystemTokens > 0 || o.Prompts.UserContextTokens > 0:
		return "the conversation prompts check every row first"
	}
	return ""
}

// sessionsCount is the request count of a plan over rows drawn for
// Trace.Sessions: the sessions are a stop condition too (AIPerf stops at
// whichever comes first), so a larger count does not send them again.
func sessionsCount(o *Options, rows int) int {
	rc := o.Replay.RequestCount
	if o.Trace.Sessions > 0 && rc > 0 && rc+o.Replay.WarmupRequests > rows {
		rc = max(rows-o.Replay.WarmupRequests, 1)
	}
	return rc
}
