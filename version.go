package reprise

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// commit is set at link time by `make build`
// (-X github.com/reprise-bench/reprise.commit=...). Builds
// without it fall back to the VCS stamp in the build info, if any.
var commit string

// Version reports reprise's module version, commit and Go version, as
// `reprise --version` prints them and the manifest and summary record them.
func Version() string {
	version, rev := "(devel)", commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("reprise %s (commit %s, %s %s/%s)", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
