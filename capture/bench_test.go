package capture_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/internal/mockserver"
)

// BenchmarkProxyOverhead measures the latency the recording proxy adds to
// a streamed chat request (8 output tokens) against the mock server:
// each iteration sends one request straight to the server and one through
// the proxy, alternately, on kept-alive connections, and times each to
// the end of its body. It reports the p50 and p99 of both and the
// differences (added-p50-µs, added-p99-µs).
func BenchmarkProxyOverhead(b *testing.B) {
	mock := startMock(b)
	proxy, rec, _ := startProxy(b, mock.URL(), nil)
	body := `{"model": "` + mockserver.DefaultModel + `", "stream": true, "max_tokens": 8, "messages": [{"role": "user", "content": "` +
		strings.Repeat("hello world ", 64) + `"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	do := func(base string) time.Duration {
		start := time.Now()
		resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	var direct, proxied []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		direct = append(direct, do(mock.URL()))
		proxied = append(proxied, do(proxy))
	}
	b.StopTimer()
	rec.Close()
	pct := func(d []time.Duration, p float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(pct(direct, 0.5), "direct-p50-µs")
	b.ReportMetric(pct(proxied, 0.5), "proxied-p50-µs")
	b.ReportMetric(pct(direct, 0.99), "direct-p99-µs")
	b.ReportMetric(pct(proxied, 0.99), "proxied-p99-µs")
	b.ReportMetric(pct(proxied, 0.5)-pct(direct, 0.5), "added-p50-µs")
	b.ReportMetric(pct(proxied, 0.99)-pct(direct, 0.99), "added-p99-µs")
}
