package hfhub

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/hfhub/hfhubtest"
)

// TestList: the tree API lists a folder's files and folders (sorted); a
// missing folder, repository and a gated one are the sentinels Download
// gives; offline, the cache's snapshot is listed.
func TestList(t *testing.T) {
	hub := hfhubtest.New()
	t.Cleanup(hub.Close)
	const rev = "refs/convert/parquet"
	const commit = "cccccccccccccccccccccccccccccccccccccccc"
	hub.AddLFSFileAt("datasets/org/math", rev, commit, "main/train/0000.parquet", "a")
	hub.AddLFSFileAt("datasets/org/math", rev, commit, "main/partial-test/0000.parquet", "b")
	hub.AddLFSFileAt("datasets/org/math", rev, commit, "socratic/train/0000.parquet", "c")
	hub.AddFileAt("datasets/org/gated", "main", commit, "x.json", "{}")
	hub.Denied("datasets/org/gated", http.StatusUnauthorized, "GatedRepo")
	cfg := Config{Endpoint: hub.URL, CacheDir: filepath.Join(t.TempDir(), "hub")}

	got, cached, err := cfg.List(t.Context(), Dataset, "org/math", rev, "")
	if err != nil || cached {
		t.Fatal(err, cached)
	}
	want := []Entry{{Path: "main", Type: "directory"}, {Path: "socratic", Type: "directory"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
	got, _, err = cfg.List(t.Context(), Dataset, "org/math", rev, "main")
	if err != nil || len(got) != 2 || got[0].Name() != "partial-test" || !got[0].IsDir() || got[1].Name() != "train" {
		t.Errorf("main: %+v, %v", got, err)
	}
	if r := hub.Requests(); len(r) != 2 || r[0] != "GET /api/datasets/org/math/tree/refs%2Fconvert%2Fparquet" {
		t.Errorf("requests %q", r)
	}
	for _, tc := range []struct {
		repo, dir string
		is        error
		want      string
	}{
		{"org/math", "nope", ErrEntryNotFound, "HTTP 404"},
		{"org/none", "", ErrRepoNotFound, "check the name org/none"},
		{"org/gated", "", ErrGated, "ask for access on " + hub.URL + "/datasets/org/gated"},
	} {
		_, _, err := cfg.List(t.Context(), Dataset, tc.repo, rev, tc.dir)
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v, want %v with %q", tc.repo, tc.dir, err, tc.is, tc.want)
		}
	}

	// Offline: what the cache holds.
	if _, err := cfg.Download(t.Context(), Dataset, "org/math", rev, "main/train/0000.parquet"); err != nil {
		t.Fatal(err)
	}
	hub.Requests()
	cfg.Offline = true
	got, cached, err = cfg.List(t.Context(), Dataset, "org/math", rev, "main")
	if err != nil || !cached || len(got) != 1 || got[0].Path != "main/train" || !got[0].IsDir() {
		t.Errorf("offline: %+v, %v, %v", got, cached, err)
	}
	if _, _, err := cfg.List(t.Context(), Dataset, "org/other", rev, ""); !errors.Is(err, ErrOffline) {
		t.Errorf("offline, not cached: %v", err)
	}
	if r := hub.Requests(); len(r) != 0 {
		t.Errorf("offline asked %q", r)
	}
}
