package runout

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/reprise-bench/reprise"
)

// Start writes the lines a command prints to w when a run starts (the
// OnStart of reprise.Options): a note on a base URL that repeats the
// endpoint path (even when quiet), then, unless quiet, the notes on the
// trace held in memory, the calibration applied and rows without an
// output length, and the start line: what is replayed against what, in
// which mode, how much, and where the results go. o is the run's options.
func Start(w io.Writer, s reprise.Start, o *reprise.Options, quiet bool) {
	if n := URLNote(s.URL, s.EndpointPath); n != "" {
		fmt.Fprintf(w, "reprise: note: %s\n", n)
	}
	if quiet {
		return
	}
	if s.HeldReason != "" && s.Trace != "" {
		fmt.Fprintf(w, "reprise: note: the %d rows of the trace are held in memory (%s); sorted traces of independent requests are read while the run goes\n",
			s.TraceRows, s.HeldReason)
	}
	if c := s.Calibration; c != nil {
		fmt.Fprintf(w, "reprise: applying the calibration %s (reprise selftest of %s, %s ago): errors within ±%.3g ms up to %.1f streams, %.0f tokens/s, %.1f req/s; --calibration off ignores it\n",
			c.File, c.Created.Format(time.DateTime), time.Since(c.Created).Round(time.Minute), c.MaxErrorMS,
			c.SafeLoad.Streams, c.SafeLoad.EventsPerSec, c.SafeLoad.RequestsPerSec)
	}
	if n := s.ServerOutputRows; n > 0 {
		fmt.Fprintf(w, "reprise: note: %d rows of the trace have no output length: they are sent without max_tokens and ignore_eos, the server decides (as AIPerf does; --osl N gives them N)\n", n)
	}
	if s.ServerOutputSynthetic {
		fmt.Fprintln(w, "reprise: note: the synthetic load has no output length: requests are sent without max_tokens and ignore_eos, the server decides (as AIPerf does; --osl N asks for N)")
	}
	if n := s.DefaultedOutput; n > 0 {
		fmt.Fprintf(w, "reprise: note: %d rows of the trace have no output length: they ask for --osl %d output tokens\n", n, int(o.Synthetic.OSL))
	}
	what := orSynthetic(s.Trace)
	switch {
	case s.Graded != "" && o.Accuracy.Mix == 0:
		what = s.Graded // the graded items are the load
	case s.Graded != "":
		what += " with " + s.Graded
	}
	fmt.Fprintf(w, "reprise: replaying %s against %s (%s, %s mode, %s) → %s\n",
		what, EndpointURL(s.URL, s.EndpointPath), s.Endpoint, s.Mode,
		PlannedText(s.Planned, o.Replay.Duration), s.Dir)
}

// PlannedText says how much a run will send: requests planned (-1 =
// unknown, as for a synthetic load with --duration alone) and the
// --duration limit (0 = none).
func PlannedText(requests int, d time.Duration) string {
	switch {
	case requests >= 0 && d > 0:
		return fmt.Sprintf("%d requests planned, for at most %v", requests, d)
	case requests >= 0:
		return fmt.Sprintf("%d requests planned", requests)
	case d > 0:
		return fmt.Sprintf("requests for %v", d)
	}
	return "requests until stopped"
}

func orSynthetic(p string) string {
	switch p {
	case "":
		return "a synthetic load"
	case "-":
		return "standard input"
	}
	return p
}

// EndpointURL is where requests go: the base URL, then the adapter's path.
func EndpointURL(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

// URLNote warns when the base URL already ends in the first segment of the
// endpoint path, as OpenAI clients' base URLs do (http://host:8000/v1 with
// /v1/chat/completions): the requests would go to /v1/v1/chat/completions,
// which servers answer with 404. Empty otherwise.
func URLNote(base, path string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	p := strings.TrimRight(u.Path, "/")
	if p == "" {
		return ""
	}
	last := p[strings.LastIndex(p, "/"):]
	if !strings.HasPrefix(path, last+"/") {
		return ""
	}
	root := *u
	root.Path = strings.TrimSuffix(p, last)
	return fmt.Sprintf("--url %s ends in %s and the endpoint path %s is appended to it, so requests go to %s; "+
		"--url is the server's base URL (%s) unless that path is meant", base, last, path, EndpointURL(base, path), root.String())
}
