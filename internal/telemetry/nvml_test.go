//go:build cgo

package telemetry

import (
	"context"
	"errors"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// TestNVMLMockDGXH100 samples go-nvml's mock DGX H100 (8 GPUs, 80 GiB).
func TestNVMLMockDGXH100(t *testing.T) {
	srv := dgxh100.New()
	srv.InitFunc = func() nvml.Return { return nvml.SUCCESS }
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		watts := uint32(300_000 + 1000*i) // mW
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(10 * i), Memory: 5}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) { return watts, nvml.SUCCESS }
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 123_456, nvml.SUCCESS }
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 55, nvml.SUCCESS }
		// The SM clock is "not supported" on this mock GPU: it must become NaN, not an error.
		dev.GetClockInfoFunc = func(nvml.ClockType) (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	}
	g, err := newNVML(srv)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	gpus, err := g.Sample(context.Background(), 99)
	if err != nil {
		t.Fatal(err)
	}
	if len(gpus) != 8 {
		t.Fatalf("%d GPUs, want 8", len(gpus))
	}
	s := gpus[3]
	if s.Source != "nvml" || s.GPU != 3 || s.UUID == "" || s.Name == "" || s.TimeNS != 99 {
		t.Errorf("identity %+v", s)
	}
	if s.UtilPct != 30 || s.PowerW != 303 || s.EnergyJ != 123.456 || s.TempC != 55 || s.SMClockMHz == s.SMClockMHz {
		t.Errorf("values %+v", s)
	}
	if s.MemTotalBytes < 79<<30 || s.MemTotalBytes > 81<<30 {
		t.Errorf("memory total %v, want about 80 GiB", s.MemTotalBytes)
	}
}

func TestNVMLLibraryMissing(t *testing.T) {
	lib := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	_, err := newNVML(lib)
	if !errors.Is(err, ErrNoNVML) {
		t.Fatalf("err %v, want ErrNoNVML", err)
	}
}
