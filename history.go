package reprise

import (
	"fmt"
	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/trace"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// maxHistoryResponse bounds the response text of one turn kept in a
// session's history (bytes); a longer response is cut at a character
// boundary and counted in engineResult.HistoryTruncated.
const maxHistoryResponse = 1 << 20

// Roles of a trace row in history growth (bits).
const (
	roleFirst   uint8 = 1 << iota // first turn of a session that grows history: built ahead, starts a history
	roleLater                     // a later turn: built on the send path, with the history
	roleCapture                   // a later turn needs this turn's response
)

// histories holds the roles of the trace's rows and the live histories of
// the session runs in flight.
type histories struct {
	roles []uint8 // by item
	// A trace with dependent requests (design 0008) grows no session
	// histories: a row extending another (trace.Row.ParentID, not
	// cumulative) is built from a copy of that row's conversation, kept
	// in saved until every row extending it took its copy.
	dag       bool
	forkOf    []int32 // by item: the item it extends, -1 none
	extenders []int32 // by item: rows extending it not yet built (under mu)
	saved     map[int]*history
	src       engine.SessionPromptSource
	mu        sync.Mutex
	live      map[uint64]*history // by replay.Job.SessionRun
	truncated atomic.Int64
	builds    atomic.Int64
	warn      sync.Once
	log       *slog.Logger
}

type history struct {
	sp engine.SessionPrompts
}

// newHistories resolves the roles of rows under mode; nil when no row
// grows a history (then nothing changes for any request).
func newHistories(mode engine.ContextMode, rows []trace.Row, src engine.PromptSource, log *slog.Logger) (*histories, error) {
	if mode == "" {
		mode = engine.DefaultContextMode
	}
	if err := mode.Check(rows); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(rows, func(r trace.Row) bool { return r.WaitFor != nil }) {
		return dagHistories(mode, rows, src, log)
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
	ss, ok := src.(engine.SessionPromptSource)
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
	if len(text) <= maxHistoryResponse {
		return string(text)
	}
	h.truncated.Add(1)
	h.warn.Do(func() {
		h.log.Warn("a response kept in a session's history was cut", slog.Int("max_bytes", maxHistoryResponse))
	})
	i := maxHistoryResponse
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return string(text[:i])
}

// dagHistories resolves the rows of a trace with dependent requests that
// extend another row's conversation: such a row (roleLater) is built on
// the send path from a copy of its parent's history; the parent
// (roleCapture, and roleFirst when it extends nothing itself) records its
// prompt and live response. nil when no row extends another.
func dagHistories(mode engine.ContextMode, rows []trace.Row, src engine.PromptSource, log *slog.Logger) (*histories, error) {
	byID := map[int64]int32{}
	for i := range rows {
		if rows[i].RequestID >= 0 {
			byID[rows[i].RequestID] = int32(i)
		}
	}
	var h *histories
	for i := range rows {
		r := &rows[i]
		if !extendsLive(mode, r) {
			continue
		}
		p, ok := byID[r.ParentID]
		if !ok {
			continue
		}
		if h == nil {
			h = &histories{dag: true, roles: make([]uint8, len(rows)), forkOf: make([]int32, len(rows)),
				extenders: make([]int32, len(rows)), saved: map[int]*history{}, live: map[uint64]*history{}, log: log}
			for k := range h.forkOf {
				h.forkOf[k] = -1
			}
		}
		h.roles[i] |= roleLater
		h.forkOf[i] = p
		h.roles[p] |= roleCapture
		h.extenders[p]++
	}
	if h == nil {
		return nil, nil
	}
	for i, role := range h.roles {
		if role&roleCapture != 0 && role&roleLater == 0 {
			h.roles[i] |= roleFirst
		}
	}
	ss, ok := src.(engine.SessionPromptSource)
	if !ok {
		return nil, fmt.Errorf("context mode %s: the trace has rows that extend another request's conversation, but the prompt source cannot build them; use context mode self-contained", mode)
	}
	h.src = ss
	return h, nil
}

// extendsLive reports whether r, under mode, is sent after its parent's
// prompt and live response: a dependent row naming a parent whose own
// lengths are its new tokens.
func extendsLive(mode engine.ContextMode, r *trace.Row) bool {
	if r.ParentID < 0 || r.WaitFor == nil || r.Cumulative {
		return false
	}
	c := *r
	c.SessionID = "-" // Grows asks for a session; the parent plays its part
	return mode.Grows(&c)
}

// forker is a SessionPrompts that can copy itself (sessionSource).
type forker interface {
	Fork() engine.SessionPrompts
}

// dagGet returns the history item is built and recorded with: a copy of
// its parent's (roleLater), or a new one (roleFirst); nil for neither or
// when the parent left none (it failed before recording).
func (h *histories) dagGet(item int) *history {
	role := h.role(item)
	switch {
	case role&roleLater != 0:
		p := int(h.forkOf[item])
		h.mu.Lock()
		defer h.mu.Unlock()
		s := h.saved[p]
		if s == nil {
			return nil
		}
		h.extenders[p]--
		if h.extenders[p] <= 0 {
			delete(h.saved, p)
		}
		f, ok := s.sp.(forker)
		if !ok {
			return nil
		}
		return &history{sp: f.Fork()}
	case role&roleFirst != 0:
		return &history{sp: h.src.NewSession()}
	}
	return nil
}

// dagSave keeps item's recorded history for the rows extending it.
func (h *histories) dagSave(item int, s *history) {
	h.mu.Lock()
	h.saved[item] = s
	h.mu.Unlock()
}
