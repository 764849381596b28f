package flagmap

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Values is what the mappings read an option through, by its flag name
// (kebab-case, as the CLI spells it: "request-rate"). *cli.Command of
// urfave/cli v3 implements it, so a command passes itself; a test or a
// config reader can pass a map. A name that is not an option reads as
// its zero value. IsSet reports whether the option was given (on the
// command line, in the environment or in a config file), as opposed to
// taking its default.
type Values interface {
	String(name string) string
	Int(name string) int
	Int64(name string) int64
	Uint64(name string) uint64
	Float(name string) float64
	Bool(name string) bool
	Duration(name string) time.Duration
	StringSlice(name string) []string
	IsSet(name string) bool
}

// CommaList splits each value of a repeatable flag documented as
// comma-separated (--url, whose REPRISE_URL lists several; --fail-on) on
// its commas, dropping empty items.
func CommaList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for s := range strings.SplitSeq(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// WithScheme is how a URL flag (--url, --upstream, --server-metrics, the
// dcgm= of --gpu-telemetry) reads a value without a scheme: host:port, or
// a host, is http://host:port, as AIPerf takes its --url
// (localhost:8000). A value with a scheme, or an empty one, is kept.
func WithScheme(u string) string {
	if u == "" || strings.Contains(u, "://") || strings.ContainsAny(u, " \t\r\n") {
		// Empty, with a scheme, or no host (white space): left for the
		// URL check to accept or refuse as the user wrote it.
		return u
	}
	return "http://" + u
}

// MaxSeconds is the longest time a time.Duration holds, in seconds
// (about 292 years).
const MaxSeconds = float64(math.MaxInt64) / float64(time.Second)

// Seconds converts AIPerf's float seconds of --flag; a value no Duration
// holds (NaN, infinite, beyond ±292 years) is added to errs, never
// wrapped around to a negative duration.
func Seconds(errs *[]error, flag string, s float64) time.Duration {
	if !(math.Abs(s) <= MaxSeconds) {
		*errs = append(*errs, fmt.Errorf("--%s: %v seconds is out of range; want a finite number of seconds up to %.4g", flag, s, MaxSeconds))
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
