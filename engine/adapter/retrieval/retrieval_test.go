package retrieval_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/adapter/retrieval"
	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/wasm"
)

// TestFixtures classifies the composed responses of every API (see
// testdata/README.md): one content record per body with items, the
// server's prompt tokens where the API reports them, errors from non-2xx
// bodies.
func TestFixtures(t *testing.T) {
	cases := []struct {
		api      retrieval.API
		file     string
		content  int
		prompt   int // -1: not reported
		errMsg   string
		parseErr bool
	}{
		{retrieval.Embeddings, "embeddings.http", 1, 9, "", false},
		{retrieval.Embeddings, "embeddings-vllm.http", 1, 4, "", false},
		{retrieval.NIMEmbeddings, "embeddings.http", 1, 9, "", false},
		{retrieval.Embeddings, "embeddings-tei-422.http", 0, -1, "batch size 64 > maximum allowed batch size 32", false},
		{retrieval.RerankTEI, "rerank-tei.http", 1, -1, "", false},
		{retrieval.RerankCohere, "rerank-cohere.http", 1, -1, "", false},
		{retrieval.RankingNIM, "ranking-nim.http", 1, -1, "", false},
		{retrieval.RerankVLLM, "rerank-vllm.http", 1, 46, "", false},
		{retrieval.ScoreVLLM, "score-vllm.http", 1, 30, "", false},
		{retrieval.ScoreVLLM, "score-vllm-400.http", 0, -1, "The model does not support Score API", false},
		// A body of another API's shape is malformed, not a silent success.
		{retrieval.RankingNIM, "rerank-vllm.http", 0, 46, "", false},
		{retrieval.RerankTEI, "rerank-cohere.http", 0, -1, "", true},
		{retrieval.Embeddings, "score-vllm.http", 0, -1, "", true},
	}
	for _, tc := range cases {
		a := retrieval.Adapter{API: tc.api}
		in, err := a.NewInstance(&adapter.Config{Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := wasm.ReadRecording(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		cl, err := wasm.Classify(in, 1, rec, a.Info().Framing, 0)
		name := a.Info().Name + "/" + tc.file
		if (err != nil) != tc.parseErr {
			t.Errorf("%s: parse error %v, want one: %v", name, err, tc.parseErr)
			continue
		}
		content := 0
		for _, r := range cl.Records {
			if r.Kind == record.EventContent {
				content++
			}
		}
		prompt := -1
		if cl.Final.Valid&adapter.ValidPromptTokens != 0 {
			prompt = int(cl.Final.PromptTokens)
		}
		if content != tc.content || (!tc.parseErr && prompt != tc.prompt) || string(cl.Final.ErrorMessage) != tc.errMsg {
			t.Errorf("%s: %d content records, prompt tokens %d, error %q; want %d, %d, %q",
				name, content, prompt, cl.Final.ErrorMessage, tc.content, tc.prompt, tc.errMsg)
		}
	}
}

// TestBuild: every API's request body carries the batch in its own
// shape.
func TestBuild(t *testing.T) {
	bi := adapter.BuildInput{PromptText: "q \"1\"", Inputs: []string{"a", "b"}, Raw: json.RawMessage(`{"input_length":3}`)}
	cases := map[retrieval.API]string{
		retrieval.Embeddings:    `{"model":"m","input":["q \"1\"","a","b"],"encoding_format":"float","dimensions":4}`,
		retrieval.NIMEmbeddings: `{"model":"m","input":["q \"1\"","a","b"],"encoding_format":"float","input_type":"passage","truncate":"NONE","dimensions":4}`,
		retrieval.RerankTEI:     `{"query":"q \"1\"","texts":["a","b"],"raw_scores":false,"return_text":false,"truncate":false,"dimensions":4}`,
		retrieval.RerankCohere:  `{"model":"m","query":"q \"1\"","documents":["a","b"],"top_n":2,"dimensions":4}`,
		retrieval.RankingNIM:    `{"model":"m","query":{"text":"q \"1\""},"passages":[{"text":"a"},{"text":"b"}],"truncate":"NONE","dimensions":4}`,
		retrieval.RerankVLLM:    `{"model":"m","query":"q \"1\"","documents":["a","b"],"top_n":2,"dimensions":4}`,
		retrieval.ScoreVLLM:     `{"model":"m","queries":"q \"1\"","documents":["a","b"],"dimensions":4}`,
	}
	for api, want := range cases {
		a := retrieval.Adapter{API: api}
		in, err := a.NewInstance(&adapter.Config{Model: "m", ExtraBody: json.RawMessage(`{"dimensions":4}`)})
		if err != nil {
			t.Fatal(err)
		}
		var out adapter.HTTPRequest
		if err := in.Build(&bi, &out); err != nil {
			t.Fatal(err)
		}
		if out.Path != a.Info().Path || !json.Valid(out.Body) {
			t.Errorf("%s: path %s, body %s", a.Info().Name, out.Path, out.Body)
		}
		if d := cmp.Diff(want, string(out.Body)); d != "" {
			t.Errorf("%s body (-want +got):\n%s", a.Info().Name, d)
		}
	}
	// A row with its own text sends it.
	in, _ := retrieval.Adapter{API: retrieval.Embeddings}.NewInstance(&adapter.Config{Model: "m"})
	var out adapter.HTTPRequest
	if err := in.Build(&adapter.BuildInput{Raw: json.RawMessage(`{"text_input":"own"}`)}, &out); err != nil {
		t.Fatal(err)
	}
	if string(out.Body) != `{"model":"m","input":["own"],"encoding_format":"float"}` {
		t.Errorf("text_input row: %s", out.Body)
	}
}
