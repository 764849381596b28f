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
	roles     []uint8 // by item
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
