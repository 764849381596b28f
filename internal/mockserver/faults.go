package mockserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FaultKind names one injectable fault.
type FaultKind string

// The faults. Status faults answer before any stream with an OpenAI-style
// error body. Mid-stream faults strike after half of the output tokens of a
// streamed response (after the only write of a non-streamed one, reset and
// stall strike before it).
const (
	Fault429                FaultKind = "429"                  // HTTP 429 rate-limit error
	Fault500                FaultKind = "500"                  // HTTP 500 server error
	Fault503                FaultKind = "503"                  // HTTP 503 overloaded
	FaultResetBeforeHeaders FaultKind = "reset-before-headers" // TCP RST after the request was read
	FaultResetMidStream     FaultKind = "reset-mid-stream"     // TCP RST half way through the stream
	FaultStall              FaultKind = "stall"                // pause of Delay half way through
	FaultMalformedSSE       FaultKind = "malformed-sse"        // one unparseable data line half way through
	FaultErrorEvent         FaultKind = "error-event"          // an error event in the 200 stream, then the end
	FaultSlowHeaders        FaultKind = "slow-headers"         // headers alone after Delay, then the normal model
	FaultJobFailed          FaultKind = "job-failed"           // a video job submitted with it ends as failed
)

// FaultHeader is the request header that injects faults into one request:
// a comma-separated list of faults, e.g. "slow-headers=1s,reset-mid-stream".
const FaultHeader = "X-Reprise-Fault"

// RequestIDHeader is the request header whose value the oracle log echoes,
// so a client can join its own rows with the server's truth.
const RequestIDHeader = "X-Request-Id"

// Fault is one fault with its parameter. Delay is the stall or header delay
// of FaultStall and FaultSlowHeaders (default 1 s).
type Fault struct {
	Kind  FaultKind
	Delay time.Duration
}

// String formats f as the header and flag accept it: "stall=2s", "429".
func (f Fault) String() string {
	if f.Kind == FaultStall || f.Kind == FaultSlowHeaders {
		return string(f.Kind) + "=" + f.Delay.String()
	}
	return string(f.Kind)
}

func (f Fault) validate() error {
	switch f.Kind {
	case Fault429, Fault500, Fault503, FaultResetBeforeHeaders, FaultResetMidStream,
		FaultMalformedSSE, FaultErrorEvent, FaultJobFailed:
		return nil
	case FaultStall, FaultSlowHeaders:
		if f.Delay < 0 {
			return fmt.Errorf("fault %s: negative delay", f.Kind)
		}
		return nil
	}
	return fmt.Errorf("unknown fault %q: want 429, 500, 503, reset-before-headers, reset-mid-stream, "+
		"stall=DURATION, malformed-sse, error-event, slow-headers=DURATION or job-failed", string(f.Kind))
}

// ParseFault parses one fault: "429", "stall=2s", "slow-headers=500ms".
// A delay fault without a duration waits 1 s.
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	name, param, hasParam := strings.Cut(s, "=")
	f := Fault{Kind: FaultKind(strings.ToLower(strings.TrimSpace(name)))}
	if f.Kind == FaultStall || f.Kind == FaultSlowHeaders {
		f.Delay = time.Second
		if hasParam {
			d, err := time.ParseDuration(strings.TrimSpace(param))
			if err != nil {
				return Fault{}, fmt.Errorf("fault %q: bad duration: %w", s, err)
			}
			f.Delay = d
		}
	} else if hasParam {
		return Fault{}, fmt.Errorf("fault %q: %s takes no parameter", s, f.Kind)
	}
	if err := f.validate(); err != nil {
		return Fault{}, err
	}
	return f, nil
}

// FaultRate is a fault injected into a random share Rate (0..1) of requests.
type FaultRate struct {
	Fault Fault
	Rate  float64
}

// ParseFaultRate parses "KIND[=PARAM]@RATE", e.g. "429@0.01" or
// "stall=2s@0.001".
func ParseFaultRate(s string) (FaultRate, error) {
	spec, rate, ok := strings.Cut(s, "@")
	if !ok {
		return FaultRate{}, fmt.Errorf("fault rate %q: want KIND[=PARAM]@RATE, e.g. 429@0.01", s)
	}
	f, err := ParseFault(spec)
	if err != nil {
		return FaultRate{}, err
	}
	r, err := strconv.ParseFloat(strings.TrimSpace(rate), 64)
	if err != nil || !(r >= 0 && r <= 1) {
		return FaultRate{}, fmt.Errorf("fault rate %q: rate %q must be a number within [0,1]", s, rate)
	}
	return FaultRate{Fault: f, Rate: r}, nil
}

// faultSet is what one request suffers. The zero value means no fault.
type faultSet struct {
	status      int // 429, 500 or 503; 0 = none
	resetBefore bool
	resetMid    bool
	malformed   bool
	errorEvent  bool
	jobFailed   bool
	stall       time.Duration
	slowHeaders time.Duration
	names       string // for the log
}

func (fs *faultSet) add(f Fault) {
	switch f.Kind {
	case Fault429:
		fs.status = 429
	case Fault500:
		fs.status = 500
	case Fault503:
		fs.status = 503
	case FaultResetBeforeHeaders:
		fs.resetBefore = true
	case FaultResetMidStream:
		fs.resetMid = true
	case FaultMalformedSSE:
		fs.malformed = true
	case FaultErrorEvent:
		fs.errorEvent = true
	case FaultJobFailed:
		fs.jobFailed = true
	case FaultStall:
		fs.stall = f.Delay
	case FaultSlowHeaders:
		fs.slowHeaders = f.Delay
	}
	if fs.names != "" {
		fs.names += ","
	}
	fs.names += f.String()
}

// midStream reports whether a fault strikes half way through the output.
func (fs *faultSet) midStream() bool {
	return fs.resetMid || fs.malformed || fs.errorEvent || fs.stall > 0
}

// strikeAt is the token step after which the mid-stream fault of an
// answer of n tokens strikes (half way), -1 when there is none.
func (fs *faultSet) strikeAt(n int) int {
	if !fs.midStream() {
		return -1
	}
	return max(n/2, 1) - 1
}

// parseFaultHeader parses the comma-separated X-Reprise-Fault value.
func parseFaultHeader(v string, fs *faultSet) error {
	for part := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		f, err := ParseFault(part)
		if err != nil {
			return err
		}
		fs.add(f)
	}
	return nil
}
