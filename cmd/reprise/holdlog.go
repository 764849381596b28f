package main

import (
	"context"
	"log/slog"
	"sync"
)

// maxHeldLogs bounds the log records held while the dashboard is up; later
// ones are counted and dropped.
const maxHeldLogs = 10_000

// holdLog holds log records while the dashboard draws on the terminal
// (a line written then would be drawn over and lost) and writes them
// when it is gone, in order. Safe for concurrent use.
type holdLog struct {
	mu      sync.Mutex
	on      bool
	held    []heldRecord
	dropped int
	inner   slog.Handler
}

type heldRecord struct {
	h slog.Handler
	r slog.Record
}

// logger is a logger over l's handler that holds records while held.
func (hl *holdLog) logger(l *slog.Logger) *slog.Logger {
	hl.inner = l.Handler()
	return slog.New(holdHandler{inner: hl.inner, hl: hl})
}

func (hl *holdLog) hold() {
	hl.mu.Lock()
	hl.on = true
	hl.mu.Unlock()
}

// release writes the held records and stops holding.
func (hl *holdLog) release() {
	if hl == nil {
		return
	}
	hl.mu.Lock()
	rs, dropped := hl.held, hl.dropped
	hl.on, hl.held, hl.dropped = false, nil, 0
	hl.mu.Unlock()
	for _, x := range rs {
		x.h.Handle(context.Background(), x.r)
	}
	if dropped > 0 {
		slog.New(hl.inner).Warn("log records dropped while the dashboard was up", slog.Int("records", dropped))
	}
}

type holdHandler struct {
	inner slog.Handler
	hl    *holdLog
}

func (h holdHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h holdHandler) Handle(ctx context.Context, r slog.Record) error {
	h.hl.mu.Lock()
	if h.hl.on {
		if len(h.hl.held) < maxHeldLogs {
			h.hl.held = append(h.hl.held, heldRecord{h: h.inner, r: r.Clone()})
		} else {
			h.hl.dropped++
		}
		h.hl.mu.Unlock()
		return nil
	}
	h.hl.mu.Unlock()
	return h.inner.Handle(ctx, r)
}

func (h holdHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return holdHandler{inner: h.inner.WithAttrs(as), hl: h.hl}
}

func (h holdHandler) WithGroup(name string) slog.Handler {
	return holdHandler{inner: h.inner.WithGroup(name), hl: h.hl}
}
