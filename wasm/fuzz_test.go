package wasm

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// FuzzGuestOutput feeds arbitrary bytes to the decoders of guest output
// (parse records, built requests, summaries): they must never panic, and
// whatever they accept must re-encode to the same bytes (round trip).
func FuzzGuestOutput(f *testing.F) {
	f.Add(appendRecords(nil, []adapter.Record{{Kind: 1, Flags: 1, Event: 0, TextBytes: 2}, {Kind: 6, Event: 1, Aux0: 2}}, []byte("hi")), uint32(0), uint32(2))
	f.Add(appendFinal(nil, &adapter.Final{Valid: 3, PromptTokens: 5, ErrorMessage: []byte("x"), Extras: []byte("{}")}), uint32(0), uint32(1))
	le := binary.LittleEndian
	var b []byte
	b = le.AppendUint32(b, 24)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint32(b, 2)
	b = le.AppendUint32(b, 2)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 0)
	b = append(b, "/x"...)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 1)
	b = append(b, "ab"...)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 0)
	b = append(b, "{}"...)
	f.Add(b, uint32(3), uint32(4))
	f.Add([]byte{}, uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, out []byte, first, n uint32) {
		n %= 512
		var text, reasoning, other []byte
		recs, err := decodeRecords(out, first, n, int(n)*4, nil, &text, &reasoning, &other)
		if err == nil {
			// Accepted output re-encodes identically.
			capt := out[recordsHeader+len(recs)*recordSize:]
			again := appendRecords(nil, recs, capt)
			if !bytes.Equal(again, out) {
				t.Fatalf("records round trip:\n%x\n%x", out, again)
			}
			for _, r := range recs {
				if r.Event < first || r.Event-first >= n {
					t.Fatalf("accepted record for event %d outside %d+%d", r.Event, first, n)
				}
			}
		}
		var req adapter.HTTPRequest
		if err := decodeRequest(out, "/d", &req); err == nil {
			if len(req.Body) > maxBody || len(req.Header) > maxHeaders || len(req.Holes) > maxHoles {
				t.Fatalf("limits not enforced: %d body, %d headers, %d holes", len(req.Body), len(req.Header), len(req.Holes))
			}
			for _, h := range req.Holes {
				if h.Offset > len(req.Body) {
					t.Fatalf("hole at %d past the %d-byte body", h.Offset, len(req.Body))
				}
			}
		}
		var fin adapter.Final
		var msg, ext []byte
		if err := decodeFinal(out, &fin, &msg, &ext); err == nil {
			// Only the 48-byte form is canonical; compare the decoded values.
			again := appendFinal(nil, &fin)
			var fin2 adapter.Final
			var msg2, ext2 []byte
			if err := decodeFinal(again, &fin2, &msg2, &ext2); err != nil {
				t.Fatalf("re-decode: %v", err)
			}
			if d := cmp.Diff(fin, fin2, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("final round trip:\n%s", d)
			}
		}
	})
}

// TestParseAllocs is the allocation budget of the parse path: once the
// instance's buffers have grown, parsing a batch allocates nothing on the
// host side.
func TestParseAllocs(t *testing.T) {
	events := []adapter.Event{{Data: []byte(`{"x":1}`)}, {Name: []byte("e"), Data: []byte(`{"y":2}`)}}
	var buf []byte
	var recs []adapter.Record
	out := appendRecords(nil, []adapter.Record{{Kind: 1, Event: 0}, {Kind: 6, Event: 1}}, nil)
	allocs := testing.AllocsPerRun(100, func() {
		buf = appendBatch(buf[:0], events, 0, adapter.BatchEndOfStream)
		var err error
		recs, err = decodeRecords(out, 0, 2, 8, recs[:0], nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("encode batch + decode records: %v allocs, want 0", allocs)
	}
}
