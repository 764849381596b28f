//go:build cgo

package telemetry

import (
	"context"
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/reprise-bench/reprise/engine/record"
)

// NVML samples local GPUs through the NVIDIA driver's NVML library, loaded
// at run time (dlopen of libnvidia-ml.so.1): a cgo build runs anywhere and
// says clearly when the driver is missing.
type NVML struct {
	lib     nvml.Interface
	devices []nvml.Device
	uuids   []string
	names   []string
}

// NewNVML initialises NVML and enumerates the GPUs.
func NewNVML() (*NVML, error) { return newNVML(nvml.New()) }

// newNVML initialises lib (the real library, or go-nvml's mock in tests).
func newNVML(lib nvml.Interface) (*NVML, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, fmt.Errorf("%w: libnvidia-ml.so.1 not found (no NVIDIA driver on this machine); "+
				"use --gpu-telemetry dcgm=URL to read a DCGM exporter instead", ErrNoNVML)
		}
		return nil, fmt.Errorf("%w: nvml init: %v", ErrNoNVML, ret)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("nvml: device count: %v", ret)
	}
	g := &NVML{lib: lib}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("nvml: device %d: %v", i, ret)
		}
		uuid, _ := d.GetUUID()
		name, _ := d.GetName()
		g.devices = append(g.devices, d)
		g.uuids = append(g.uuids, uuid)
		g.names = append(g.names, name)
	}
	return g, nil
}

// Name implements GPUSource.
func (g *NVML) Name() string { return "nvml" }

// Close shuts NVML down.
func (g *NVML) Close() error {
	if ret := g.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %v", ret)
	}
	return nil
}

// Sample implements GPUSource. A value the device does not support is NaN.
func (g *NVML) Sample(_ context.Context, timeNS int64) ([]record.GPUSample, error) {
	out := make([]record.GPUSample, 0, len(g.devices))
	for i, d := range g.devices {
		s := newGPUSample(timeNS, "nvml", int32(i))
		s.UUID, s.Name = g.uuids[i], g.names[i]
		if u, ret := d.GetUtilizationRates(); ret == nvml.SUCCESS {
			s.UtilPct = float64(u.Gpu)
		}
		if m, ret := d.GetMemoryInfo(); ret == nvml.SUCCESS {
			s.MemUsedBytes, s.MemTotalBytes = float64(m.Used), float64(m.Total)
		}
		if p, ret := d.GetPowerUsage(); ret == nvml.SUCCESS {
			s.PowerW = float64(p) / 1e3 // mW
		}
		if e, ret := d.GetTotalEnergyConsumption(); ret == nvml.SUCCESS {
			s.EnergyJ = float64(e) / 1e3 // mJ since driver load
		}
		if t, ret := d.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			s.TempC = float64(t)
		}
		if c, ret := d.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			s.SMClockMHz = float64(c)
		}
		if math.IsNaN(s.UtilPct) && math.IsNaN(s.PowerW) && math.IsNaN(s.MemUsedBytes) {
			return nil, fmt.Errorf("nvml: GPU %d (%s) answered no query", i, s.UUID)
		}
		out = append(out, *s)
	}
	return out, nil
}
