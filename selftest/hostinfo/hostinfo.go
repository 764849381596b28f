package hostinfo

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strings"
)

// Files read on Linux.
const (
	cpuinfoPath     = "/proc/cpuinfo"
	osreleasePath   = "/proc/sys/kernel/osrelease"
	clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
)

// Host describes a machine. The zero value describes nothing.
type Host struct {
	// Hostname is the kernel's host name (os.Hostname).
	Hostname string `json:"hostname"`
	// OS and Arch are runtime.GOOS and runtime.GOARCH.
	OS   string `json:"os"`
	Arch string `json:"arch"`
	// CPUModel is the first "model name" of /proc/cpuinfo ("" where the
	// kernel gives none, as on many ARM machines).
	CPUModel string `json:"cpu_model"`
	// CPUs is the number of logical CPUs the process may run on
	// (runtime.NumCPU: the affinity mask, not the machine's total).
	CPUs int `json:"cpus"`
	// Kernel is the kernel release (uname -r).
	Kernel string `json:"kernel"`
	// ClockSource is the kernel's current clock source (tsc, hpet,
	// kvm-clock, arch_sys_counter…): what every timestamp of the run is
	// read from. A slow one (hpet, acpi_pm) makes each clock read cost
	// microseconds.
	ClockSource string `json:"clock_source"`
}

// Describe describes the machine it runs on.
func Describe() Host {
	h := Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	h.Kernel = readLine(osreleasePath)
	h.ClockSource = readLine(clocksourcePath)
	if f, err := os.Open(cpuinfoPath); err == nil {
		h.CPUModel = cpuModel(f)
		f.Close()
	}
	return h
}

// readLine returns the trimmed content of a one-line file, "" when it
// cannot be read.
func readLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuModel returns the value of the first "model name" line of a
// /proc/cpuinfo text, "" when there is none.
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
