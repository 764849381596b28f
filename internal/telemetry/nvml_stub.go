//go:build !cgo

package telemetry

import (
	"context"
	"fmt"

	"github.com/reprise-bench/reprise/engine/record"
)

// NVML is unavailable in a build without cgo.
type NVML struct{}

// NewNVML reports that this binary cannot use NVML.
func NewNVML() (*NVML, error) {
	return nil, fmt.Errorf("%w: this reprise binary was built without cgo (CGO_ENABLED=0); "+
		"rebuild with CGO_ENABLED=1, or use --gpu-telemetry dcgm=URL", ErrNoNVML)
}

// Name implements GPUSource.
func (g *NVML) Name() string { return "nvml" }

// Close implements GPUSource.
func (g *NVML) Close() error { return nil }

// Sample implements GPUSource.
func (g *NVML) Sample(context.Context, int64) ([]record.GPUSample, error) { return nil, ErrNoNVML }
