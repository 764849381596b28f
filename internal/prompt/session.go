package prompt

import (
	"slices"
	"strings"

	"github.com/reprise-bench/reprise/internal/tokenizer"
)

// Message is one chat message.
type Message struct {
	Role    string // "user" or "assistant"
	Content string
}

// Session grows the history of one multi-turn conversation whose rows
// carry only the new tokens of each turn (Mooncake rows with a session
// id). It follows AIPerf's default context mode, deltas_without_responses:
// turn k is sent with every earlier user prompt and the assistant response
// the server actually returned for it, then the new prompt. The wire
// prefix therefore depends on the server's answers, not only on the trace.
//
// Bailian rows (trace.Row.Cumulative) already include their history and
// must not use a Session.
//
// A Session is not safe for concurrent use; a conversation's turns run one
// after another anyway.
type Session struct {
	tok     tokenizer.Tokenizer
	msgs    []Message
	text    strings.Builder
	ids     []int
	tokens  int
	withIDs bool
	// prev is the token count of the last recorded turn's whole prompt
	// (its history and its own prompt), -1 before any.
	prev int
}

// NewSession returns an empty conversation history for prompts of s.
func (s *Builder) NewSession() *Session {
	return &Session{tok: s.tok, withIDs: s.cfg.Format == FormatTokenIDs, prev: -1}
}

// Messages returns the chat messages of the turn p: the history, then p
// as one user message. The slice is owned by the Session and valid until
// the next Record.
func (ss *Session) Messages(p *Prompt) []Message {
	return append(ss.msgs[:len(ss.msgs):len(ss.msgs)], Message{Role: "user", Content: p.Text})
}

// Text returns the completions prompt of the turn p: the history text,
// then p's text.
func (ss *Session) Text(p *Prompt) string {
	if ss.text.Len() == 0 {
		return p.Text
	}
	return ss.text.String() + ss.lead(p) + p.Text
}

// TokenIDs returns the token ids of Text(p) when p was built with
// FormatTokenIDs: the history's ids, then p's. The result is a new slice.
func (ss *Session) TokenIDs(p *Prompt) []int {
	out := make([]int, 0, len(ss.ids)+len(p.TokenIDs))
	return append(append(out, ss.ids...), p.TokenIDs...)
}

// Record appends the turn p and the assistant's response to the history.
// response is the content the server streamed (or its reasoning text when
// the content was empty), as AIPerf appends it.
func (ss *Session) Record(p *Prompt, response string) {
	ss.msgs = append(ss.msgs, Message{Role: "user", Content: p.Text}, Message{Role: "assistant", Content: response})
	if ss.text.Len() > 0 {
		ss.text.WriteString(ss.lead(p))
	}
	ss.text.WriteString(p.Text)
	ss.text.WriteString(response)
	ss.prev = ss.tokens + max(p.Tokens, 0)
	ss.tokens += max(p.Tokens, 0)
	if ss.withIDs {
		ss.ids = append(ss.ids, p.TokenIDs...)
		n := len(ss.ids)
		ss.ids = ss.tok.AppendEncode(ss.ids, response)
		ss.tokens += len(ss.ids) - n
	} else {
		ss.tokens += ss.tok.Count(response)
	}
}

// HistoryTokens returns the tokens of the recorded history (prompts and
// responses, each counted by the tokenizer on its own, without a chat
// template): what the next turn sends on top of its own tokens.
func (ss *Session) HistoryTokens() int { return ss.tokens }

// lead puts back the space a SentencePiece prompt dropped at its start:
// inside a longer text, the words must keep their leading space to stay
// the same tokens.
func (ss *Session) lead(p *Prompt) string {
	if p.stripped {
		return " "
	}
	return ""
}

// ExpectedCachedTokens returns what a prefix cache of blockSize-token
// blocks holds, for sure, of the next turn's prompt: the last recorded
// turn's whole prompt was computed by the server and is the next prompt's
// prefix, so its full blocks are cached (⌊P/B⌋·B tokens, P its length in
// this Session's tokens). The response's tokens may be cached too (vLLM
// caches generated blocks, the mock server and SGLang's radix cache on
// some paths do not), so a server may report more, never less unless it
// evicted, its block size differs, or its chat template changes the
// earlier messages' tokens. 0 before any recorded turn; -1 when blockSize
// is not positive.
func (ss *Session) ExpectedCachedTokens(blockSize int) int {
	if blockSize <= 0 {
		return -1
	}
	if ss.prev <= 0 {
		return 0
	}
	return ss.prev / blockSize * blockSize
}

// Clone returns an independent copy of the history: a conversation that
// branches (a dependent request extending this one, design 0008) grows
// the copy without touching the original.
func (ss *Session) Clone() *Session {
	c := &Session{tok: ss.tok, msgs: slices.Clone(ss.msgs), ids: slices.Clone(ss.ids), tokens: ss.tokens,
		withIDs: ss.withIDs, prev: ss.prev}
	c.text.WriteString(ss.text.String())
	return c
}

// Turns returns the number of recorded turns.
func (ss *Session) Turns() int { return len(ss.msgs) / 2 }
