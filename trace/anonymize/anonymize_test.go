package anonymize

import (
	"bytes"
	"testing"

	"github.com/reprise-bench/reprise/trace"
)

// TestKeyedMapping: one key maps equal ids to equal ids and keeps
// structure (−1 stays −1); another key maps them elsewhere; nothing of
// the text survives.
func TestKeyedMapping(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, KeySize), bytes.Repeat([]byte{2}, KeySize)
	a, _ := New(Config{Key: k1})
	b, _ := New(Config{Key: k1})
	c, _ := New(Config{Key: k2})
	row := func() trace.Row {
		return trace.Row{Line: 1, InputTokens: 30, HashIDs: []uint64{7, 8}, SessionID: "alice", RequestID: 5, ParentID: -1,
			WaitFor: []int64{3}, Kind: "gpt-4", Raw: []byte(`{"extra": {"user": "alice"}}`)}
	}
	ra, rb, rc := row(), row(), row()
	for _, x := range []struct {
		an *Anonymizer
		r  *trace.Row
	}{{a, &ra}, {b, &rb}, {c, &rc}} {
		if err := x.an.Row(x.r); err != nil {
			t.Fatal(err)
		}
	}
	if ra.HashIDs[0] != rb.HashIDs[0] || ra.SessionID != rb.SessionID || ra.RequestID != rb.RequestID || ra.WaitFor[0] != rb.WaitFor[0] {
		t.Errorf("one key, two mappings: %+v vs %+v", ra, rb)
	}
	if ra.HashIDs[0] == rc.HashIDs[0] || ra.SessionID == rc.SessionID || ra.HashIDs[0] == 7 || ra.HashIDs[0] == ra.HashIDs[1] {
		t.Errorf("mapping does not depend on the key, or keeps ids: %v %v", ra.HashIDs, rc.HashIDs)
	}
	if ra.ParentID != -1 || ra.Raw != nil || ra.Kind != "" || ra.HashIDs[0]>>63 != 0 || ra.RequestID>>62 != 0 {
		t.Errorf("row %+v", ra)
	}
	if _, err := ParseKey("abc"); err == nil {
		t.Error("a short key parsed")
	}
	if k, err := ParseKey(string(bytes.Repeat([]byte("0f"), KeySize))); err != nil || len(k) != KeySize {
		t.Errorf("ParseKey: %v", err)
	}
}
