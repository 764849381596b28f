package arrowio

import (
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/reprise-bench/reprise/engine/record"
)

func TestTelemetryTablesRoundTrip(t *testing.T) {
	for _, format := range allFormats {
		t.Run(string(format), func(t *testing.T) {
			dir := t.TempDir()
			cfg := NewConfig()
			cfg.Format = format
			mw, err := NewMetricsWriter(dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			gw, err := NewGPUWriter(dir, cfg)
			if err != nil {
				t.Fatal(err)
			}
			nan := math.NaN()
			var want []record.MetricSample
			var wg sync.WaitGroup
			var mu sync.Mutex
			// Scrapers write concurrently; order within the table is not
			// guaranteed, so compare sorted.
			for target := range 4 {
				batch := []record.MetricSample{
					{TimeNS: int64(target), Target: "t", Metric: "vllm:num_requests_running", Type: "gauge", Labels: `model_name="m"`, Bound: nan, Value: 3},
					{TimeNS: int64(target), Target: "t", Metric: "h", Type: "histogram", Part: "bucket", Bound: math.Inf(1), Value: 7},
					{TimeNS: int64(target), Target: "t", Metric: "h", Type: "histogram", Part: "sum", Bound: nan, Value: 0.5},
				}
				mu.Lock()
				want = append(want, batch...)
				mu.Unlock()
				wg.Go(func() { mw.Write(batch) })
			}
			wg.Wait()
			gpus := []record.GPUSample{
				{TimeNS: 5, Source: "nvml", GPU: 0, UUID: "GPU-a", Name: "H100", UtilPct: 99, MemUsedBytes: 1, MemTotalBytes: 2,
					PowerW: 700, EnergyJ: 1e6, TempC: 60, SMClockMHz: nan},
				{TimeNS: 5, Source: "dcgm", GPU: 1, UtilPct: nan, MemUsedBytes: nan, MemTotalBytes: nan, PowerW: nan,
					EnergyJ: nan, TempC: nan, SMClockMHz: 1980},
			}
			gw.Write(gpus)
			if err := mw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := gw.Close(); err != nil {
				t.Fatal(err)
			}
			if mw.Dropped() != 0 || gw.Dropped() != 0 {
				t.Fatalf("dropped %d/%d", mw.Dropped(), gw.Dropped())
			}
			mw.Write(want) // after Close: dropped, never a panic
			if mw.Dropped() != int64(len(want)) {
				t.Errorf("write after close: dropped %d", mw.Dropped())
			}

			gotM, err := ReadMetricSamples(dir)
			if err != nil {
				t.Fatal(err)
			}
			sortM := cmpopts.SortSlices(func(a, b record.MetricSample) bool {
				if a.TimeNS != b.TimeNS {
					return a.TimeNS < b.TimeNS
				}
				return a.Metric+a.Part < b.Metric+b.Part
			})
			if d := cmp.Diff(want, gotM, sortM, cmpopts.EquateNaNs()); d != "" {
				t.Errorf("server_metrics round trip (-want +got):\n%s", d)
			}
			gotG, err := ReadGPUSamples(dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(gpus, gotG, cmpopts.EquateNaNs()); d != "" {
				t.Errorf("gpu round trip (-want +got):\n%s", d)
			}
		})
	}
}
