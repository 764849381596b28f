package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestHoldLog: records logged while held (by the logger and by one
// derived with attributes) are written on release, in order, and
// records after it at once.
func TestHoldLog(t *testing.T) {
	var buf bytes.Buffer
	var hl holdLog
	l := hl.logger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Info("before")
	hl.hold()
	l.Warn("one")
	l.With("k", "v").Info("two")
	l.Debug("below the level")
	if got := buf.String(); !strings.Contains(got, "before") || strings.Contains(got, "one") {
		t.Fatalf("while held: %q", got)
	}
	hl.release()
	l.Info("after")
	got := buf.String()
	i, j, k := strings.Index(got, "msg=one"), strings.Index(got, "msg=two k=v"), strings.Index(got, "msg=after")
	if i < 0 || j < i || k < j || strings.Contains(got, "below the level") {
		t.Errorf("after release: %q", got)
	}
	var nilHold *holdLog
	nilHold.release() // no dashboard: nothing held
}
