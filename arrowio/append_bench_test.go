package arrowio

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/engine/record"
)

// BenchmarkAppendRequest appends 4,096 records' rows (the writer's hot
// path, without encoding) and builds them into one record.
func BenchmarkAppendRequest(b *testing.B) {
	reqs := genRequests(4096, 11)
	rb := newRequestBuilder(memory.DefaultAllocator)
	defer rb.release()
	b.ReportAllocs()
	for b.Loop() {
		rb.reserve(len(reqs))
		for i := range reqs {
			rb.appendRequest(&reqs[i])
		}
		rb.newRecord().Release()
	}
}

// BenchmarkAppendRequests reads the 4,096 rows of one record back into
// records (the reader's hot path, without decoding).
func BenchmarkAppendRequests(b *testing.B) {
	reqs := genRequests(4096, 12)
	rb := newRequestBuilder(memory.DefaultAllocator)
	defer rb.release()
	rb.reserve(len(reqs))
	for i := range reqs {
		rb.appendRequest(&reqs[i])
	}
	rec := rb.newRecord()
	defer rec.Release()
	out := make([]record.Request, 0, len(reqs))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if out, err = appendRequests(out[:0], rec); err != nil || len(out) != len(reqs) {
			b.Fatal(err, len(out))
		}
	}
}
