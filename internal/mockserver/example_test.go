package mockserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// Start a server on a free port, send one streamed request with a client
// id, and read the server's truth about it.
func ExampleStart() {
	ctx := context.Background()
	cfg := mockserver.NewConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.TTFT, cfg.ITL = 2*time.Millisecond, time.Millisecond
	srv, err := mockserver.Start(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL()+"/v1/completions",
		strings.NewReader(`{"prompt":[1,2,3],"max_tokens":4,"ignore_eos":true,"stream":true}`))
	req.Header.Set(mockserver.RequestIDHeader, "my-request-7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	_ = srv.WaitIdle(ctx)
	for _, l := range srv.Log() {
		fmt.Println(l.ClientRequestID, l.Status, l.PromptTokens, l.OutputTokens, l.FinishReason)
		var kinds []string
		for _, e := range l.Events {
			kinds = append(kinds, e.Kind.String())
		}
		fmt.Println(strings.Join(kinds, " "))
		fmt.Println(l.FirstTokenNS()-l.AdmittedNS >= int64(2*time.Millisecond))
	}
	// Output:
	// my-request-7 200 3 4 length
	// content content content content finish done
	// true
}
