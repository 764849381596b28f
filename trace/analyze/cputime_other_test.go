//go:build !unix

package analyze

import "time"

// cpuTime is unavailable here; rows/cpu-s is then not reported.
func cpuTime() time.Duration { return 0 }
