package arrowio

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/record"
)

// FuzzRoundTrip fills a record.Request and a record.Event from arbitrary
// bytes (every field, by reflection, so new fields are fuzzed too), appends
// them with the writer's column builders and decodes the Arrow record with
// the reader: the rows must come back equal, up to the documented null
// rules (0 times, negative counts and empty strings are absent values).
//
// Arbitrary file bytes are not fuzzed: arrow v17's Parquet decoder can
// panic in goroutines of its own or allocate without bound on corrupt
// footers (see TestCorruptFiles for what is guarded).
func FuzzRoundTrip(f *testing.F) {
	for i, r := range genRequests(50, 3) {
		if i%7 == 0 {
			f.Add(encodeFields(reflect.ValueOf(&r).Elem()))
		}
	}
	f.Add([]byte{})
	f.Add(make([]byte, 600))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r record.Request
		rest := decodeFields(reflect.ValueOf(&r).Elem(), data)
		var e record.Event
		decodeFields(reflect.ValueOf(&e).Elem(), rest)

		rb := newRequestBuilder(bufferPool)
		defer rb.release()
		rb.reserve(1)
		rb.appendRequest(&r)
		rec := rb.newRecord()
		defer rec.Release()
		got, err := appendRequests(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(normalizeRequest(r), got[0], cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("request round trip (-want +got):\n%s", diff)
		}

		eb := newEventBuilder(bufferPool)
		defer eb.release()
		eb.reserve(1)
		eb.appendEvent(&e)
		erec := eb.newRecord()
		defer erec.Release()
		gotE, err := appendEvents(nil, erec)
		if err != nil {
			t.Fatal(err)
		}
		if int(e.Kind) >= len(eventKindValues)-1 {
			e.Kind = record.EventKind(len(eventKindValues) - 1)
		}
		if e.Tokens < 0 {
			e.Tokens = -1
		}
		if e.Choice < 0 {
			e.Choice = -1 // no choice: null
		}
		if diff := cmp.Diff(e, gotE[0]); diff != "" {
			t.Errorf("event round trip (-want +got):\n%s", diff)
		}
	})
}

// normalizeRequest applies the null rules of docs/format/records.md: what a
// written and re-read request looks like.
func normalizeRequest(r record.Request) record.Request {
	neg := func(v *int32) {
		if *v < 0 {
			*v = -1
		}
	}
	if r.TraceRow < 0 {
		r.TraceRow = -1
	}
	if r.Task <= 0 {
		r.Task = 0 // none, written as null
	}
	if r.ReleasedBy == 0 || r.ReleasedBy > math.MaxInt64 {
		r.ReleasedBy = 0 // none, or no int64 column value
	}
	if r.Level <= 0 {
		r.Level = 0
	}
	if r.Phase != record.PhaseWarmup {
		r.Phase = record.PhaseProfile
	}
	if r.IntendedNS == 0 || r.DispatchedNS == 0 {
		r.LatenessNS = 0
	}
	if r.MaxTokens < 0 {
		// Negative max_tokens is kept (only 0 is null).
	}
	for _, p := range []*int32{&r.ServerPromptTokens, &r.ServerCompletionTokens, &r.ServerReasoningTokens,
		&r.ServerCachedTokens, &r.ExpectedCachedTokens, &r.TraceInputTokens} {
		neg(p)
	}
	if int(r.OutputTokensSource) >= len(tokenSourceValues) {
		r.OutputTokensSource = record.TokensUnknown // not a source: written as null
	}
	if r.ErrorKind != record.ErrNone {
		known := false
		for _, k := range errorKindValues[:len(errorKindValues)-1] {
			known = known || string(r.ErrorKind) == k
		}
		if !known {
			r.ErrorKind = "unknown"
		}
	}
	if !r.Graded {
		// Only a graded request's accuracy fields are written.
		r.AccuracyCorrect, r.AccuracyTask, r.AccuracyItem, r.AccuracyExpected, r.AccuracyAnswer = false, "", "", "", ""
	}
	return r
}

// decodeFields fills v's fields from data (little-endian, zero when data
// runs out) and returns the unused rest.
func decodeFields(v reflect.Value, data []byte) []byte {
	take := func(n int) []byte {
		b := make([]byte, n)
		k := copy(b, data)
		data = data[k:]
		return b
	}
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int32:
			f.SetInt(int64(int32(binary.LittleEndian.Uint32(take(4)))))
		case reflect.Int64:
			f.SetInt(int64(binary.LittleEndian.Uint64(take(8))))
		case reflect.Uint8:
			f.SetUint(uint64(take(1)[0]))
		case reflect.Uint64:
			f.SetUint(binary.LittleEndian.Uint64(take(8)))
		case reflect.Float64:
			f.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(take(8))))
		case reflect.Bool:
			f.SetBool(take(1)[0]&1 == 1)
		case reflect.String:
			n := int(take(1)[0] % 32)
			f.SetString(string(take(n)))
		case reflect.Slice: // []uint64; none is nil, as read back
			n := int(take(1)[0] % 8)
			if n == 0 {
				continue
			}
			ids := make([]uint64, n)
			for k := range ids {
				ids[k] = binary.LittleEndian.Uint64(take(8))
			}
			f.Set(reflect.ValueOf(ids))
		default:
			panic("BUG: field kind " + f.Kind().String())
		}
	}
	return data
}

// encodeFields is decodeFields' inverse, for seeds.
func encodeFields(v reflect.Value) []byte {
	var b []byte
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(f.Int()))
		case reflect.Int64:
			b = binary.LittleEndian.AppendUint64(b, uint64(f.Int()))
		case reflect.Uint8:
			b = append(b, byte(f.Uint()))
		case reflect.Uint64:
			b = binary.LittleEndian.AppendUint64(b, f.Uint())
		case reflect.Float64:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.Float()))
		case reflect.Bool:
			if f.Bool() {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case reflect.String:
			s := f.String()
			if len(s) > 31 {
				s = s[:31]
			}
			b = append(b, byte(len(s)))
			b = append(b, s...)
		case reflect.Slice:
			ids := f.Interface().([]uint64)
			ids = ids[:min(len(ids), 7)]
			b = append(b, byte(len(ids)))
			for _, id := range ids {
				b = binary.LittleEndian.AppendUint64(b, id)
			}
		}
	}
	return b
}
