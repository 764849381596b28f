package reprise

import (
	"strconv"
	"sync"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/internal/secret"
	"github.com/reprise-bench/reprise/trace"
)

// maxAIPerfInputs bounds the request bodies kept for inputs.json: a long
// run's bodies would otherwise all be held until it ends.
const maxAIPerfInputs = 100_000

// inputsLog keeps the request bodies of a run for AIPerf's inputs.json
// (Output.Export aiperf): each trace row (or synthetic request) once, as
// built for its first send, and, as AIPerf writes them, without the live
// history a later turn was sent with. Builders call add concurrently,
// and build ahead of the senders: only the bodies of requests sent
// (markSent) are listed.
type inputsLog struct {
	mu      sync.Mutex
	seen    map[string]bool
	sent    map[int]bool // request numbers sent
	inputs  []arrowio.AIPerfInput
	items   []int // inputs[i]'s request number
	dropped int
}

func newInputsLog() *inputsLog { return &inputsLog{seen: map[string]bool{}, sent: map[int]bool{}} }

// markSent notes that request item is sent: its body, if kept, is listed.
func (l *inputsLog) markSent(item int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.sent[item] = true
	l.mu.Unlock()
}

// add keeps body for row (item: its request number, which names a
// synthetic request) unless that row was kept already.
func (l *inputsLog) add(row *trace.Row, item int, body []byte) {
	key := row.SessionID + "\x00" + strconv.FormatInt(row.Index, 10)
	if row.Index < 0 {
		key = "item " + strconv.Itoa(item)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[key] {
		return
	}
	if len(l.inputs) >= maxAIPerfInputs {
		l.dropped++
		return
	}
	l.seen[key] = true
	l.inputs = append(l.inputs, arrowio.AIPerfInput{SessionID: row.SessionID, Body: bodyForFiles(body)})
	l.items = append(l.items, item)
}

// bodyForFiles is a JSON request body with the value of every
// secret-looking key (secretKey: --extra-body's api keys, tokens) replaced,
// as the manifest writes --extra-body; a body that is not JSON is kept
// as it is (WriteAIPerfInputs leaves it out).
func bodyForFiles(body []byte) []byte {
	return secret.Body(body)
}

// list returns the bodies kept of the requests sent, in the order they
// were built: a request built ahead and never sent (the run ended first)
// is left out.
func (l *inputsLog) list() []arrowio.AIPerfInput {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []arrowio.AIPerfInput
	for i, in := range l.inputs {
		if l.sent[l.items[i]] {
			out = append(out, in)
		}
	}
	return out
}

// record keeps the body of a request just built (p) for inputs.json. A
// later turn built with its session's history is built once more, alone,
// as AIPerf formats each turn.
func (rn *runner) recordInput(b *engine.Builder, item int, row *trace.Row, in *adapter.BuildInput, p *engine.Prepared, history bool) {
	l := rn.cfg.Inputs
	if l == nil || p.Err != nil {
		return
	}
	if !history || rn.cfg.Prompts == nil {
		l.add(row, item, p.Body)
		return
	}
	alone := *in
	alone.Messages, alone.PromptText, alone.PromptTokens = nil, "", nil
	alone.Flags &^= adapter.BuildHistory
	if _, _, err := rn.cfg.Prompts.Prompt(row, &alone); err != nil {
		return
	}
	if len(alone.Messages) > 1 {
		alone.Flags |= adapter.BuildHistory // the conversation prompts before the turn
	}
	var q engine.Prepared
	if b.Build(&alone, &q) == nil {
		l.add(row, item, q.Body)
	}
}
