package flagmap

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/reprise-bench/reprise/capture"
)

// Record maps `reprise record`'s flags onto capture's Config, every
// problem of them (and of args, which it takes none of) joined in the
// error, each naming its flag. The tokenizer, the log, the listener and
// the output files are the command's.
func Record(v Values, args []string) (capture.Config, error) {
	var errs []error
	if len(args) > 0 {
		errs = append(errs, fmt.Errorf("record takes no arguments, got %q", args))
	}
	upstream := WithScheme(v.String("upstream"))
	up, err := url.Parse(upstream)
	switch {
	case upstream == "":
		errs = append(errs, errors.New("--upstream: missing; give the server's base URL, e.g. http://127.0.0.1:8000"))
	case err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "":
		errs = append(errs, fmt.Errorf("--upstream %q: want an http:// or https:// URL with a host", upstream))
	}
	if v.Int("block-size") < 1 {
		errs = append(errs, fmt.Errorf("--block-size %d: want ≥ 1 tokens", v.Int("block-size")))
	}
	if v.Int64("max-held-bytes") < 1 {
		errs = append(errs, fmt.Errorf("--max-held-bytes %d: want ≥ 1", v.Int64("max-held-bytes")))
	}
	for _, f := range []string{"body-timeout", "idle-timeout"} {
		if v.Duration(f) < 0 {
			errs = append(errs, fmt.Errorf("--%s %v: want ≥ 0 (0: no bound)", f, v.Duration(f)))
		}
	}
	if v.String("output") == "" || v.String("output") == "-" {
		errs = append(errs, errors.New("--output: give a file (the trace is written as requests finish)"))
	}
	cfg := capture.NewConfig()
	cfg.Upstream, cfg.BlockSize, cfg.SessionHeader = up, v.Int("block-size"), v.String("session-header")
	cfg.MaxHeldBytes, cfg.BodyTimeout, cfg.IdleTimeout = v.Int64("max-held-bytes"), v.Duration("body-timeout"), v.Duration("idle-timeout")
	return cfg, errors.Join(errs...)
}
