package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/jsonx"
	"github.com/reprise-bench/reprise/internal/mockserver"
	"github.com/reprise-bench/reprise/internal/tokenizer"
	"github.com/reprise-bench/reprise/trace"
)

// TestMockServerCacheFidelity sends synthesized prompts, as text, in trace
// order to the mock server (same tokenizer, same block size, a prefix
// cache that never evicts) and checks, per request, that the server counts
// exactly input_length prompt tokens and reports the cached tokens the
// trace predicts: the leading run of ids seen before, in full blocks (the
// server, like vLLM, never caches a partial last block), i.e.
// min(ExpectedCachedTokens, ⌊L/B⌋·B).
func TestMockServerCacheFidelity(t *testing.T) {
	tok := mustLoad(t, "builtin")
	t.Run("bailian-sample", func(t *testing.T) {
		replayAgainstMock(t, tok, bailianSample(600, 40, 11))
	})
	t.Run("mooncake-conversation", func(t *testing.T) {
		rows := readTrace(t, "conversation_trace.jsonl")
		n := 150
		if raceEnabled {
			n = 40
		}
		replayAgainstMock(t, tok, rows[:n])
	})
}

func replayAgainstMock(t *testing.T, tok tokenizer.Tokenizer, rows []trace.Row) {
	B := rows[0].BlockSize
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT, cfg.ITL = time.Microsecond, time.Microsecond
	cfg.BlockSize = B
	cfg.PrefixCacheTokens = 1 << 40 / B * B // never evicts
	cfg.MaxModelLen = 1 << 20
	cfg.KeepLog = false
	cfg.Tokenizer = tok
	srv, err := mockserver.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	s := mustBuilder(t, tok, fidelityConfig())
	if err := s.Prepare(rows); err != nil {
		t.Fatal(err)
	}
	var p Prompt
	body := make([]byte, 0, 1<<20)
	client := &http.Client{Timeout: time.Minute}
	for i := range rows {
		r := &rows[i]
		if err := s.Build(r, &p); err != nil {
			t.Fatal(err)
		}
		body = append(body[:0], `{"model":"`+mockserver.DefaultModel+`","max_tokens":1,"prompt":`...)
		body = jsonx.AppendString(body, p.Text)
		body = append(body, '}')
		promptTokens, cached, err := post(client, srv.URL()+"/v1/completions", body)
		if err != nil {
			t.Fatalf("row %d: %v", r.Index, err)
		}
		L := r.InputTokens
		want := min(p.ExpectedCachedTokens, L/B*B)
		if promptTokens != L || cached != want {
			t.Fatalf("row %d: server counted %d prompt tokens (want %d) and %d cached (want %d; expected_cached_tokens %d)",
				r.Index, promptTokens, L, cached, want, p.ExpectedCachedTokens)
		}
	}
}

func post(c *http.Client, url string, body []byte) (promptTokens, cached int, err error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, 0, fmt.Errorf("status %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("status %s", resp.Status)
	}
	return out.Usage.PromptTokens, out.Usage.PromptTokensDetails.CachedTokens, nil
}
