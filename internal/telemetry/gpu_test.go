package telemetry

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/reprise-bench/reprise/engine/record"
)

func TestDCGMExporterPage(t *testing.T) {
	page, err := os.ReadFile("testdata/dcgm-exporter.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(page) }))
	defer srv.Close()
	d := NewDCGM(srv.URL)
	gpus, err := d.Sample(context.Background(), 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 2 {
		t.Fatalf("%d GPUs, want 2", len(gpus))
	}
	g := gpus[0]
	const mib = 1 << 20
	want := record.GPUSample{
		TimeNS: 7, Source: "dcgm", GPU: 0, UUID: "GPU-1d8b2f8e-0000-0000-0000-000000000000",
		Name: "NVIDIA H100 80GB HBM3", UtilPct: 97, MemUsedBytes: 76679 * mib,
		MemTotalBytes: (76679 + 4321 + 559) * mib, PowerW: 512.25, EnergyJ: 8123456.789,
		TempC: 61, SMClockMHz: 1980,
	}
	if g != want {
		t.Errorf("GPU 0\n got %+v\nwant %+v", g, want)
	}
	if gpus[1].GPU != 1 || gpus[1].PowerW != 98.5 {
		t.Errorf("GPU 1 %+v", gpus[1])
	}
}

func TestDCGMUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusServiceUnavailable) }))
	defer srv.Close()
	s := NewGPUSampler(NewDCGM(srv.URL), 0, nil, func([]record.GPUSample) { t.Error("sink called for a failed sample") })
	s.SampleOnce(context.Background())
	n, failed, err := s.Stats()
	if n != 1 || failed != 1 || err == nil {
		t.Fatalf("stats %d %d %v", n, failed, err)
	}
}

func gpuAt(t int64, gpu int32, power, energy float64) record.GPUSample {
	s := *newGPUSample(t, "dcgm", gpu)
	s.PowerW, s.EnergyJ, s.UtilPct, s.MemUsedBytes = power, energy, 50, 1e9
	return s
}

func TestSummarizeGPU(t *testing.T) {
	samples := []record.GPUSample{
		gpuAt(0, 0, 100, 1000), gpuAt(0, 1, 200, 5000), // before the window
		gpuAt(1e9, 0, 300, 1100), gpuAt(1e9, 1, 400, 5400),
		gpuAt(3e9, 0, 500, 2000), gpuAt(3e9, 1, 600, 6600),
	}
	s := SummarizeGPU(samples, 1e9, 3e9, 1000)
	if s == nil || s.GPUs != 2 || s.Samples != 4 {
		t.Fatalf("summary %+v", s)
	}
	// Mean power per GPU (400 and 500 W), summed; energy from the counters:
	// (2000−1100) + (6600−5400) = 2100 J.
	if s.AvgPowerW != 900 || !s.EnergyFromCounter || s.EnergyJ != 2100 || s.EnergyPerOutputTokenJ != 2.1 {
		t.Errorf("summary %+v", s)
	}
	// Without energy counters, power is integrated: GPU0 (300+500)/2·2 s = 800 J,
	// GPU1 (400+600)/2·2 s = 1000 J.
	for i := range samples {
		samples[i].EnergyJ = math.NaN()
	}
	s = SummarizeGPU(samples, 1e9, 3e9, 0)
	if s.EnergyFromCounter || s.EnergyJ != 1800 || s.EnergyPerOutputTokenJ != 0 {
		t.Errorf("integrated summary %+v", s)
	}
	if SummarizeGPU(samples, 10e9, 11e9, 0) != nil {
		t.Error("want nil for an empty window")
	}
}
