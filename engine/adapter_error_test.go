package engine

import (
	"errors"
	"testing"

	"github.com/reprise-bench/reprise/engine/adapter"
)

// rejectingAdapter fails every NewInstance the way a Wasm adapter whose
// rp_configure rejects the configuration does.
type rejectingAdapter struct{}

func (rejectingAdapter) Info() adapter.Info { return adapter.Info{Name: "evil", Path: "/x"} }
func (rejectingAdapter) NewInstance(*adapter.Config) (adapter.Instance, error) {
	return nil, errors.New("adapter evil rejected its configuration (rp_configure): GUEST_ERROR: no")
}

// TestNewInstanceErrorOnce: a sender's or builder's adapter error is
// returned as the adapter said it, with its name once.
func TestNewInstanceErrorOnce(t *testing.T) {
	cfg := NewConfig()
	cfg.BaseURL = "http://127.0.0.1:9"
	cfg.Adapter = rejectingAdapter{}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const want = "adapter evil rejected its configuration (rp_configure): GUEST_ERROR: no"
	if _, err := e.NewSender(); err == nil || err.Error() != want {
		t.Errorf("NewSender: %v, want %q", err, want)
	}
	if _, err := e.NewBuilder(); err == nil || err.Error() != want {
		t.Errorf("NewBuilder: %v, want %q", err, want)
	}
}
