package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestScrapeAllWithin: a target that does not answer is given the shorter
// time of ScrapeAllWithin, not the scrape timeout, and is recorded as a
// failed scrape naming that time; a scrape whose context is cancelled (the
// run was stopped) is not recorded at all.
func TestScrapeAllWithin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	}))
	defer srv.Close()
	var c collect
	cfg := NewScrapeConfig(srv.URL + "/metrics")
	cfg.Timeout = time.Hour // the test would hang if it were used
	s, err := NewScraper(cfg, c.sink)
	if err != nil {
		t.Fatal(err)
	}
	s.ScrapeAllWithin(context.Background(), 50*time.Millisecond)
	scrapes, failed, errs := s.Stats()
	if ok, down := c.up(); scrapes != 1 || failed != 1 || ok != 0 || down != 1 || len(errs) != 1 ||
		errs[0].Err != "GET "+srv.URL+"/metrics: no answer within 50ms" {
		t.Fatalf("%d scrapes, %d failed (up %d, down %d), errors %v; want one failed scrape, no answer within 50ms", scrapes, failed, ok, down, errs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	s.ScrapeAllWithin(ctx, time.Hour)
	if n, _, _ := s.Stats(); n != 1 {
		t.Errorf("a cancelled scrape was recorded: %d scrapes", n)
	}
}
