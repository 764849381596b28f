package hostinfo

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestCPUModel(t *testing.T) {
	tests := []struct{ name, cpuinfo, want string }{
		{"x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: other\n", "AMD EPYC 7B13"},
		{"arm64 without a model name", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := cpuModel(strings.NewReader(tt.cpuinfo)); got != tt.want {
			t.Errorf("%s: cpuModel = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	h := Describe()
	name, _ := os.Hostname()
	if h.Hostname != name || h.OS != runtime.GOOS || h.Arch != runtime.GOARCH || h.CPUs != runtime.NumCPU() {
		t.Errorf("Describe() = %+v", h)
	}
	if runtime.GOOS == "linux" && h.Kernel == "" {
		t.Errorf("no kernel release on Linux: %+v", h)
	}
}

func BenchmarkDescribe(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Describe()
	}
}
