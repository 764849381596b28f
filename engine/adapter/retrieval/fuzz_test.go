package retrieval_test

import (
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/retrieval"
	"github.com/reprise-bench/reprise/engine/record"
)

// FuzzRetrievalBody: every API's parser never panics on any body, flags
// nothing but event 0, and counts content only with items.
func FuzzRetrievalBody(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"usage":{"prompt_tokens":3}}`,
		`[{"index":0,"score":0.9}]`, `{"results":[{"index":1,"relevance_score":0.5}],"meta":{"tokens":{"input_tokens":7}}}`,
		`{"rankings":[{"index":0,"logit":-1}]}`, `{"data":[{"index":0,"object":"score","score":0.8}],"usage":{"total_tokens":2}}`,
		`{"error":{"message":"x"}}`, `{"error":"x","error_type":"validation"}`, `[]`, `null`, `{"data":[{"embedding":null}]}`,
	} {
		for api := range 7 {
			f.Add([]byte(s), uint8(api), false)
		}
		f.Add([]byte(s), uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, api uint8, nonOK bool) {
		a := retrieval.Adapter{API: retrieval.API(api % 7)}
		in, err := a.NewInstance(&adapter.Config{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		in.Open(1, 0)
		ev := adapter.Event{Data: b, Flags: adapter.EventWholeBody}
		if nonOK {
			ev.Flags |= adapter.EventNonOK
		}
		recs, err := in.Parse(1, &adapter.Batch{Flags: adapter.BatchWholeBody, Events: []adapter.Event{ev}}, nil)
		var fin adapter.Final
		if cerr := in.Close(1, &fin); cerr != nil {
			t.Fatal(cerr)
		}
		if nonOK && err != nil {
			t.Fatalf("a non-2xx body failed the parse: %v", err)
		}
		for _, r := range recs {
			if r.Event != 0 {
				t.Fatalf("record for event %d", r.Event)
			}
			if r.Kind == record.EventContent && (err != nil || nonOK) {
				t.Fatalf("content record from a failed or non-2xx body %q", b)
			}
		}
	})
}
