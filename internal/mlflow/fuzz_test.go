package mlflow_test

import (
	"testing"

	"github.com/reprise-bench/reprise/internal/mlflow"
)

// FuzzSummaryMetrics feeds summary.json's reader arbitrary JSON: it
// never panics, and every metric it returns has a key and a finite value.
func FuzzSummaryMetrics(f *testing.F) {
	f.Add([]byte(`{"request_count":{"unit":"requests","avg":10},"ttft":{"unit":"ms","avg":1,"p50":2}}`))
	f.Add([]byte(`{"a":{"unit":1,"avg":"x"},"b":[1,2],"c":{}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, js []byte) {
		ms, err := mlflow.SummaryMetrics(js)
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.Key == "" || m.Value != m.Value {
				t.Fatalf("metric %+v", m)
			}
		}
		if _, err := mlflow.Params(js); err != nil {
			t.Fatalf("Params of a JSON object SummaryMetrics read: %v", err)
		}
	})
}
