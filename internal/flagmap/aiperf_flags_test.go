package flagmap

import (
	"strings"
	"testing"
	"time"

	"github.com/reprise-bench/reprise"
	"github.com/reprise-bench/reprise/replay"
)

// TestProfileRunFlags: --failed-request-threshold sets the option (0
// included: it aborts at the first failure; unset leaves it nil),
// --stats-interval the progress interval, --output-tokens-mean-deterministic
// min_tokens with ignore_eos; values out of range are errors naming the
// flag.
func TestProfileRunFlags(t *testing.T) {
	var o reprise.Options
	var rc replay.Config
	if err := ProfileRunFlags(vals{}, &o, &rc); err != nil || o.FailedRequestThreshold != nil || o.ProgressInterval != 0 || o.MinTokens {
		t.Fatalf("no flags: %v, %+v", err, o)
	}
	err := ProfileRunFlags(vals{"failed-request-threshold": 0.0, "stats-interval": 0.5, "output-tokens-mean-deterministic": true}, &o, &rc)
	if err != nil {
		t.Fatal(err)
	}
	if o.FailedRequestThreshold == nil || *o.FailedRequestThreshold != 0 || o.ProgressInterval != 500*time.Millisecond || !o.MinTokens || !o.IgnoreEOS {
		t.Errorf("options %+v", o)
	}
	for flag, v := range map[string]float64{"failed-request-threshold": 1.5, "stats-interval": 0} {
		err := ProfileRunFlags(vals{flag: v}, &reprise.Options{}, &rc)
		if err == nil || !strings.Contains(err.Error(), "--"+flag) {
			t.Errorf("--%s %v: err = %v", flag, v, err)
		}
	}
}
