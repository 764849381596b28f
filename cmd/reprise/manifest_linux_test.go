package main

import (
	"strings"
	"syscall"
	"testing"
)

// checkHostLinux checks the manifest's host fields against the kernel's
// own answers: uname(2), /proc/cpuinfo and the clock source in sysfs.
func checkHostLinux(t *testing.T, cpuModel, kernel, clockSource string) {
	t.Helper()
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var rel strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel.WriteByte(byte(c))
	}
	if kernel != rel.String() {
		t.Errorf("host.kernel %q, want %q", kernel, rel.String())
	}
	if want := hostFile(t, "/sys/devices/system/clocksource/clocksource0/current_clocksource"); clockSource != want {
		t.Errorf("host.clock_source %q, want %q", clockSource, want)
	}
	want := ""
	for _, line := range strings.Split(hostFile(t, "/proc/cpuinfo"), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			want = strings.TrimSpace(v)
			break
		}
	}
	if want != "" && cpuModel != want {
		t.Errorf("host.cpu_model %q, want %q", cpuModel, want)
	}
}
