package reprise

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/prompt"
	"github.com/reprise-bench/reprise/trace"
)

// promptSource is the engine's PromptSource over a prompt.Builder: exactly
// the row's input length in the run tokenizer's tokens, sharing the
// leading blocks its hash ids say, with the expected cached tokens of an
// infinite prefix cache. Prepare ran over the whole trace first, so the
// engine's builders may call it concurrently and out of order.
type promptSource struct {
	s    *prompt.Builder
	mu   sync.Mutex // serializes Build for Builder versions that are not goroutine-safe
	pool sync.Pool  // *prompt.Prompt
	ids  bool       // send token ids (completions)
	pre  preamble   // the conversation prompts before a file's rows
	chat *chatFit   // fits synthesized prompts through a chat template; nil for none
}

var _ engine.SessionPromptSource = (*promptSource)(nil)

// Prompt implements engine.PromptSource.
func (sp *promptSource) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	p, _ := sp.pool.Get().(*prompt.Prompt)
	if p == nil {
		p = &prompt.Prompt{}
	}
	defer sp.pool.Put(p)
	if err := sp.build(row, p, in.Seed); err != nil {
		return 0, 0, err
	}
	if !p.Synthesized {
		// The row's own text_input / messages / payload: the adapter sends
		// them from the row itself; Tokens is the client count (-1 payload).
		// The conversation prompts make it a conversation of messages.
		n := max(p.Tokens, 0)
		if sp.pre.on() {
			var k int
			in.Messages, k = sp.pre.prepend(sp, row, []adapter.Message{{Role: "user", Content: p.Text}})
			in.PromptText = p.Text
			n += k
		}
		return n, -1, nil
	}
	in.PromptText = p.Text
	if sp.ids && len(p.TokenIDs) > 0 {
		in.PromptTokens = slices.Clone(p.TokenIDs)
		in.PromptText = ""
	}
	exp := -1
	if row.BlockSize > 0 && len(row.HashIDs) > 0 {
		exp = p.ExpectedCachedTokens
	}
	return p.Tokens, exp, nil
}

// build builds row's prompt into p; with a chat template, refitted
// (chatFit.refit) until the templated prompt counts the row's length.
func (sp *promptSource) build(row *trace.Row, p *prompt.Prompt, seed uint64) error {
	for try := 0; ; try++ {
		sp.mu.Lock()
		var err error
		if row.Index < 0 {
			// A synthetic request: its fresh words follow its index (seed),
			// so a shard sends what the unsharded run would.
			err = sp.s.BuildKeyed(row, p, seed)
		} else {
			err = sp.s.Build(row, p)
		}
		sp.mu.Unlock()
		if err != nil || sp.chat == nil || !p.Synthesized {
			return err
		}
		refit, ok := sp.chat.refit(row, p, try)
		if !ok {
			return nil
		}
		row = refit
	}
}

// NewSession implements engine.SessionPromptSource: the history of one
// session run, grown as AIPerf's deltas_without_responses does (see
// prompt.Session).
func (sp *promptSource) NewSession() engine.SessionPrompts {
	return &sessionSource{sp: sp, sess: sp.s.NewSession(), last: -1}
}

// sessionSource builds the turns of one session run with their history.
// The engine calls it for one turn at a time.
type sessionSource struct {
	sp   *promptSource
	sess *prompt.Session
	p    prompt.Prompt // the turn last built
	last int64         // its row index, -1 none
}

// Prompt implements engine.SessionPrompts.
func (ss *sessionSource) Prompt(row *trace.Row, in *adapter.BuildInput) (int, int, error) {
	if err := ss.build(row); err != nil {
		return 0, 0, err
	}
	p := &ss.p
	msgs := ss.sess.Messages(p)
	in.Messages = make([]adapter.Message, len(msgs))
	for i, m := range msgs {
		in.Messages[i] = adapter.Message{Role: m.Role, Content: m.Content}
	}
	pre := 0
	if ss.sp.pre.on() {
		in.Messages, pre = ss.sp.pre.prepend(ss.sp, row, in.Messages)
	}
	in.PromptText = ss.sess.Text(p)
	if ss.sp.ids && len(p.TokenIDs) > 0 {
		in.PromptTokens = ss.sess.TokenIDs(p)
		in.PromptText = ""
	}
	n := pre + ss.sess.HistoryTokens() + max(p.Tokens, 0)
	exp := -1
	if ss.sess.Turns() > 0 {
		exp = ss.sess.ExpectedCachedTokens(row.BlockSize)
	} else if p.Synthesized && row.BlockSize > 0 && len(row.HashIDs) > 0 {
		exp = p.ExpectedCachedTokens
	}
	return n, exp, nil
}

// Fork returns a copy of the history for a conversation that branches
// off here (a request extending this one's prompt and live response).
func (ss *sessionSource) Fork() engine.SessionPrompts {
	return &sessionSource{sp: ss.sp, sess: ss.sess.Clone(), last: -1}
}

// Record implements engine.SessionPrompts.
func (ss *sessionSource) Record(row *trace.Row, response string) error {
	if ss.last != row.Index {
		// A first turn, built ahead by the engine: build it again (after
		// Prepare, Build depends only on the row).
		if err := ss.build(row); err != nil {
			return err
		}
	}
	ss.sess.Record(&ss.p, response)
	ss.last = -1
	return nil
}

func (ss *sessionSource) build(row *trace.Row) error {
	ss.last = -1
	ss.sp.mu.Lock()
	err := ss.sp.s.Build(row, &ss.p)
	ss.sp.mu.Unlock()
	if err != nil {
		return err
	}
	ss.last = row.Index
	return nil
}

// newPromptSource builds the prompt builder and prepares it over the whole
// trace, reporting every row problem at once.
func newPromptSource(rp *replayPlan, cfg prompt.Config, ids bool) (*promptSource, error) {
	s, err := prompt.New(rp.tok, cfg)
	if err != nil {
		return nil, fmt.Errorf("prompt synthesis with tokenizer %s: %w", rp.tok.Name(), err)
	}
	if rp.rows != nil {
		// Prepare checks every row up front and fixes the expected cached
		// tokens in trace order, whatever order the builders run in.
		rows := rp.rows
		if len(rp.prime) > 0 {
			// The priming requests come first: the measured requests'
			// expected cached tokens count their blocks.
			rows = append(slices.Clone(rp.prime), rp.rows...)
		}
		if pr, ok := any(s).(interface{ Prepare([]trace.Row) error }); ok {
			if err := pr.Prepare(rows); err != nil {
				return nil, err
			}
		} else if err := checkHashFit(rp.rows, cfg.Mismatch); err != nil {
			return nil, err
		}
	}
	return &promptSource{s: s, ids: ids}, nil
}

// checkHashFit reports every row whose hash ids do not fit its length
// (under Prompts.HashMismatch error), before anything is sent.
func checkHashFit(rows []trace.Row, m prompt.Mismatch) error {
	if m != prompt.MismatchError {
		return nil
	}
	var errs []error
	for i := range rows {
		r := &rows[i]
		k := len(r.HashIDs)
		if k == 0 || r.BlockSize <= 0 || len(r.Raw) > 0 {
			continue
		}
		if last := r.InputTokens - (k-1)*r.BlockSize; last <= 0 || last > r.BlockSize {
			errs = append(errs, &prompt.HashMismatchError{Index: r.Index, Line: r.Line, InputTokens: r.InputTokens, HashIDs: k, BlockSize: r.BlockSize})
			if len(errs) == 20 {
				break
			}
		}
	}
	return errors.Join(errs...)
}
