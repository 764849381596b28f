package hfhub

import (
	"crypto/sha1" //nolint:gosec // git's blob names
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeHub speaks the Hub's resolve URLs as huggingface_hub's documentation
// and source describe them: a file kept in git answers 200 with its git
// blob sha1 as ETag; an LFS file answers 302 to a CDN on another host,
// with X-Linked-Etag (its sha256) and X-Linked-Size; every answer names
// the commit in X-Repo-Commit; errors carry X-Error-Code.
type fakeHub struct {
	t    *testing.T
	hub  *httptest.Server
	cdn  *httptest.Server
	mu   sync.Mutex
	reqs []string // "METHOD path auth"
	// repos: id → branch or tag → commit; files: commit → name → content.
	repos map[string]map[string]string
	files map[string]map[string]string
	lfs   map[string]bool // file names served through the CDN
	// private repos answer 401 RepoNotFound without the token; gated
	// ones 403 GatedRepo.
	private, gated map[string]bool
	token          string
	renamed        map[string]string // old id → new id (a same-host redirect)
	// truncate sends half of every GET body; corrupt flips its first byte.
	truncate, corrupt atomic.Bool
	cdnAuth           atomic.Int64 // CDN requests that carried an Authorization header
}

const (
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func newFakeHub(t *testing.T) *fakeHub {
	f := &fakeHub{t: t,
		repos: map[string]map[string]string{
			"org/tok":     {"main": commitA, "v1": commitB},
			"org/private": {"main": commitA},
			"org/gated":   {"main": commitA},
			"ds/sharegpt": {"main": commitA},
		},
		files: map[string]map[string]string{
			commitA: {"tokenizer.json": `{"version":"A"}`, "big.bin": strings.Repeat("lfs bytes ", 300), "data/train.jsonl": "{}\n"},
			commitB: {"tokenizer.json": `{"version":"B"}`},
		},
		lfs:     map[string]bool{"big.bin": true},
		private: map[string]bool{"org/private": true},
		gated:   map[string]bool{"org/gated": true},
		token:   "hf_secret",
		renamed: map[string]string{"old/tok": "org/tok"},
	}
	f.cdn = httptest.NewServer(http.HandlerFunc(f.serveCDN))
	f.hub = httptest.NewServer(http.HandlerFunc(f.serveHub))
	t.Cleanup(func() { f.hub.Close(); f.cdn.Close() })
	return f
}

func (f *fakeHub) log(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, r.Method+" "+r.URL.EscapedPath()+" "+r.Header.Get("Authorization"))
}

// requests returns and clears the requests the Hub got.
func (f *fakeHub) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.reqs
	f.reqs = nil
	return r
}

func gitSHA1(s string) string {
	h := sha1.New() //nolint:gosec // git's blob names
	fmt.Fprintf(h, "blob %d\x00%s", len(s), s)
	return hex.EncodeToString(h.Sum(nil))
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func (f *fakeHub) serveHub(w http.ResponseWriter, r *http.Request) {
	f.log(r)
	// /[datasets/]ORG/NAME/resolve/REVISION/FILE…, the revision one
	// escaped segment.
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	p = strings.TrimPrefix(p, "datasets/")
	parts := strings.SplitN(p, "/", 5)
	if len(parts) < 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	repo := parts[0] + "/" + parts[1]
	rev, _ := url.PathUnescape(parts[3])
	file, _ := url.PathUnescape(parts[4])
	if to, ok := f.renamed[repo]; ok {
		http.Redirect(w, r, "/"+to+"/resolve/"+parts[3]+"/"+parts[4], http.StatusTemporaryRedirect)
		return
	}
	authed := r.Header.Get("Authorization") == "Bearer "+f.token
	refs, ok := f.repos[repo]
	if !ok || (f.private[repo] && !authed) {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.Header().Set("X-Error-Message", "Repository not found")
		http.Error(w, "Repository not found", http.StatusUnauthorized)
		return
	}
	if f.gated[repo] && !authed {
		w.Header().Set("X-Error-Code", "GatedRepo")
		w.Header().Set("X-Error-Message", "Access to model "+repo+" is restricted and you are not in the authorized list.")
		http.Error(w, "gated", http.StatusForbidden)
		return
	}
	commit := rev
	if c, ok := refs[rev]; ok {
		commit = c
	} else if _, ok := f.files[rev]; !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		w.Header().Set("X-Error-Message", "Invalid rev id: "+rev)
		http.Error(w, "Invalid rev id", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", commit)
	content, ok := f.files[commit][file]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		w.Header().Set("X-Error-Message", "Entry not found")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if f.lfs[file] {
		w.Header().Set("X-Linked-Etag", `"`+sha256Hex(content)+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(content)))
		w.Header().Set("ETag", `"`+gitSHA1("version https://git-lfs…")+`"`)
		http.Redirect(w, r, f.cdn.URL+"/repos/"+sha256Hex(content)+"?X-Amz-Signature=x", http.StatusFound)
		return
	}
	w.Header().Set("ETag", `"`+gitSHA1(content)+`"`)
	f.body(w, r, content)
}

func (f *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		f.cdnAuth.Add(1)
	}
	name := strings.TrimPrefix(r.URL.Path, "/repos/")
	for _, files := range f.files {
		for _, c := range files {
			if sha256Hex(c) == name {
				f.body(w, r, c)
				return
			}
		}
	}
	http.NotFound(w, r)
}

// body writes content, or its damaged version under truncate or corrupt.
func (f *fakeHub) body(w http.ResponseWriter, r *http.Request, content string) {
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	if r.Method == http.MethodHead {
		return
	}
	switch {
	case f.truncate.Load():
		w.Write([]byte(content[:len(content)/2])) // the server then closes the connection
	case f.corrupt.Load():
		b := []byte(content)
		b[0] ^= 1
		w.Write(b)
	default:
		w.Write([]byte(content))
	}
}

func (f *fakeHub) config(t *testing.T) Config {
	return Config{Endpoint: f.hub.URL, CacheDir: t.TempDir(), Client: f.hub.Client()}
}

func TestDownloadCachesInPythonLayout(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	got, err := c.Download(t.Context(), Model, "org/tok", "", "tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Cached || got.Commit != commitA {
		t.Errorf("first download: %+v", got)
	}
	if reqs := f.requests(); len(reqs) != 2 || !strings.HasPrefix(reqs[0], "HEAD /org/tok/resolve/main/tokenizer.json") ||
		!strings.HasPrefix(reqs[1], "GET ") {
		t.Errorf("requests %q, want a HEAD then a GET", reqs)
	}
	dir := filepath.Join(c.CacheDir, "models--org--tok")
	etag := gitSHA1(`{"version":"A"}`)
	if b, err := os.ReadFile(filepath.Join(dir, "blobs", etag)); err != nil || string(b) != `{"version":"A"}` {
		t.Errorf("blob: %q %v", b, err)
	}
	snap := filepath.Join(dir, "snapshots", commitA, "tokenizer.json")
	if got.Path != snap {
		t.Errorf("path %s, want %s", got.Path, snap)
	}
	if l, err := os.Readlink(snap); err != nil || l != filepath.Join("..", "..", "blobs", etag) {
		t.Errorf("snapshot entry: link %q %v, want a relative symlink to the blob", l, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "refs", "main")); err != nil || string(b) != commitA {
		t.Errorf("refs/main: %q %v", b, err)
	}
	// Second load: from the cache, no request.
	again, err := c.Download(t.Context(), Model, "org/tok", "main", "tokenizer.json")
	if err != nil || !again.Cached || again.Path != snap {
		t.Errorf("second load: %+v %v", again, err)
	}
	if reqs := f.requests(); len(reqs) != 0 {
		t.Errorf("second load asked %q", reqs)
	}
	// Offline, the cache still answers.
	c.Offline = true
	if _, err := c.Download(t.Context(), Model, "org/tok", "main", "tokenizer.json"); err != nil {
		t.Errorf("offline from the cache: %v", err)
	}
}

func TestDownloadLFSThroughCDN(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	c.Token = f.token
	content := f.files[commitA]["big.bin"]
	got, err := c.Download(t.Context(), Model, "org/tok", "", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(got.Path)
	if err != nil || string(b) != content {
		t.Fatalf("content %d bytes, %v", len(b), err)
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "models--org--tok", "blobs", sha256Hex(content))); err != nil {
		t.Errorf("the LFS blob is not named by its sha256: %v", err)
	}
	if reqs := f.requests(); len(reqs) != 1 || !strings.HasSuffix(reqs[0], "Bearer "+f.token) {
		t.Errorf("hub requests %q: want one HEAD with the token (the GET goes to the CDN)", reqs)
	}
	if n := f.cdnAuth.Load(); n != 0 {
		t.Errorf("the token went to the CDN %d times", n)
	}
}

func TestDownloadRevisionPinning(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	for _, tc := range []struct{ rev, want, commit string }{
		{"v1", `{"version":"B"}`, commitB},    // a tag
		{commitA, `{"version":"A"}`, commitA}, // a commit
		{"main", `{"version":"A"}`, commitA},  // a branch
		{commitB, `{"version":"B"}`, commitB}, // a commit already in the cache
	} {
		got, err := c.Download(t.Context(), Model, "org/tok", tc.rev, "tokenizer.json")
		if err != nil {
			t.Fatalf("%s: %v", tc.rev, err)
		}
		if b, _ := os.ReadFile(got.Path); string(b) != tc.want || got.Commit != tc.commit {
			t.Errorf("%s: %s at %s, want %s at %s", tc.rev, b, got.Commit, tc.want, tc.commit)
		}
	}
	f.requests()
	// The last one was cached by the tag's download: a commit needs no ref.
	if got, _ := c.Download(t.Context(), Model, "org/tok", commitB, "tokenizer.json"); !got.Cached {
		t.Errorf("a pinned commit in the cache was asked again")
	}
	if _, err := os.Stat(filepath.Join(c.CacheDir, "models--org--tok", "refs", commitA)); err == nil {
		t.Errorf("a commit got a ref")
	}
	if b, _ := os.ReadFile(filepath.Join(c.CacheDir, "models--org--tok", "refs", "v1")); string(b) != commitB {
		t.Errorf("refs/v1 = %q", b)
	}
	// A revision with a slash is one escaped segment of the URL.
	_, err := c.Download(t.Context(), Model, "org/tok", "refs/pr/1", "tokenizer.json")
	if !errors.Is(err, ErrRevisionNotFound) {
		t.Errorf("refs/pr/1: %v", err)
	}
	if reqs := f.requests(); len(reqs) != 1 || !strings.Contains(reqs[0], "/resolve/refs%2Fpr%2F1/") {
		t.Errorf("requests %q", reqs)
	}
}

func TestDownloadTokenSent(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	_, err := c.Download(t.Context(), Model, "org/private", "", "tokenizer.json")
	if !errors.Is(err, ErrRepoNotFound) || !strings.Contains(err.Error(), "HF_TOKEN") {
		t.Errorf("private without a token: %v", err)
	}
	c.Token = f.token
	if _, err := c.Download(t.Context(), Model, "org/private", "", "tokenizer.json"); err != nil {
		t.Errorf("private with the token: %v", err)
	}
	for _, r := range f.requests()[1:] {
		if !strings.HasSuffix(r, "Bearer "+f.token) {
			t.Errorf("request without the token: %s", r)
		}
	}
	// The token comes from HF_TOKEN, else from the file HF_TOKEN_PATH.
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	os.WriteFile(path, []byte(f.token+"\n"), 0o600)
	env := map[string]string{"HF_TOKEN_PATH": path, "HF_ENDPOINT": f.hub.URL + "/", "HF_HOME": dir}
	ec := fromEnv(func(k string) string { return env[k] }, "/home/x")
	if ec.Token != f.token || ec.Endpoint != f.hub.URL || ec.CacheDir != filepath.Join(dir, "hub") || ec.Offline {
		t.Errorf("from the environment: %+v", ec)
	}
	env["HF_TOKEN"], env["HF_HUB_OFFLINE"], env["HF_HUB_CACHE"] = "hf_other", "1", "/c"
	ec = fromEnv(func(k string) string { return env[k] }, "/home/x")
	if ec.Token != "hf_other" || !ec.Offline || ec.CacheDir != "/c" {
		t.Errorf("HF_TOKEN, HF_HUB_OFFLINE, HF_HUB_CACHE: %+v", ec)
	}
	ec = fromEnv(func(string) string { return "" }, "/home/x")
	if ec.Endpoint != DefaultEndpoint || ec.CacheDir != "/home/x/.cache/huggingface/hub" || ec.Token != "" {
		t.Errorf("defaults: %+v", ec)
	}
}

func TestDownloadErrors(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	for _, tc := range []struct {
		repo, rev, file string
		want            error
		says            []string
	}{
		{"org/nothere", "", "tokenizer.json", ErrRepoNotFound, []string{"HTTP 401", "/org/nothere/resolve/main/tokenizer.json", "check the name org/nothere", "hf auth login"}},
		{"org/gated", "", "tokenizer.json", ErrGated, []string{"HTTP 403", "ask for access on " + f.hub.URL + "/org/gated", "HF_TOKEN"}},
		{"org/tok", "nobranch", "tokenizer.json", ErrRevisionNotFound, []string{"HTTP 404", "check the revision nobranch"}},
		{"org/tok", "", "tokenizer_config.json", ErrEntryNotFound, []string{"HTTP 404", "has no tokenizer_config.json at main"}},
		{"bad--id", "", "tokenizer.json", ErrRepoNotFound, []string{"ORG/NAME"}},
	} {
		_, err := c.Download(t.Context(), Model, tc.repo, tc.rev, tc.file)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s@%s %s: %v, want %v", tc.repo, tc.rev, tc.file, err, tc.want)
			continue
		}
		for _, s := range tc.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", tc.repo, err, s)
			}
		}
	}
	// A missing file is remembered (.no_exist): asked once.
	f.requests()
	_, err := c.Download(t.Context(), Model, "org/tok", "", "tokenizer_config.json")
	if !errors.Is(err, ErrEntryNotFound) || len(f.requests()) != 0 {
		t.Errorf("second ask of a missing file: %v", err)
	}
	// A Hub that is not one (no X-Repo-Commit).
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }))
	defer plain.Close()
	c2 := Config{Endpoint: plain.URL, CacheDir: t.TempDir(), Client: plain.Client()}
	if _, err := c2.Download(t.Context(), Model, "org/tok", "", "tokenizer.json"); !errors.Is(err, ErrHub) || !strings.Contains(err.Error(), "X-Repo-Commit") {
		t.Errorf("not a hub: %v", err)
	}
}

func TestDownloadOffline(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	c.Offline = true
	_, err := c.Download(t.Context(), Model, "org/tok", "", "tokenizer.json")
	if !errors.Is(err, ErrOffline) || !strings.Contains(err.Error(), "HF_HUB_OFFLINE") || !strings.Contains(err.Error(), "hf download org/tok tokenizer.json") {
		t.Errorf("offline, not cached: %v", err)
	}
	if reqs := f.requests(); len(reqs) != 0 {
		t.Errorf("offline asked %q", reqs)
	}
}

// TestDownloadDamagedNeverCached: a body cut short or with other bytes
// than the ETag names leaves nothing in the cache, and the next good
// download works.
func TestDownloadDamagedNeverCached(t *testing.T) {
	for _, mode := range []string{"truncate", "corrupt"} {
		for _, file := range []string{"tokenizer.json", "big.bin"} {
			t.Run(mode+"/"+file, func(t *testing.T) {
				f := newFakeHub(t)
				c := f.config(t)
				flag := &f.truncate
				if mode == "corrupt" {
					flag = &f.corrupt
				}
				flag.Store(true)
				_, err := c.Download(t.Context(), Model, "org/tok", "", file)
				if err == nil {
					t.Fatal("a damaged download succeeded")
				}
				if mode == "corrupt" && !errors.Is(err, ErrIntegrity) {
					t.Errorf("corrupt: %v, want ErrIntegrity", err)
				}
				dir := filepath.Join(c.CacheDir, "models--org--tok")
				for _, sub := range []string{"blobs", "snapshots", "refs"} {
					if entries, _ := os.ReadDir(filepath.Join(dir, sub)); len(entries) != 0 {
						t.Errorf("%s holds %d entries after a damaged download", sub, len(entries))
					}
				}
				flag.Store(false)
				got, err := c.Download(t.Context(), Model, "org/tok", "", file)
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(got.Path); string(b) != f.files[commitA][file] {
					t.Errorf("after the retry: %d bytes", len(b))
				}
			})
		}
	}
}

// TestReadPythonCache reads a cache laid out as huggingface_hub writes
// it (blobs, a relative symlink in the snapshot, refs/main), offline and
// online without a request.
func TestReadPythonCache(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	dir := filepath.Join(c.CacheDir, "models--Org--Model.v2")
	content := `{"python":"wrote this"}`
	etag := gitSHA1(content)
	for _, d := range []string{"blobs", "refs", filepath.Join("snapshots", commitB, "sub")} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "blobs", etag), []byte(content), 0o644)
	os.WriteFile(filepath.Join(dir, "refs", "main"), []byte(commitB), 0o644) // Python writes no newline
	os.Symlink(filepath.Join("..", "..", "..", "blobs", etag), filepath.Join(dir, "snapshots", commitB, "sub", "tokenizer.json"))
	for _, offline := range []bool{true, false} {
		c.Offline = offline
		got, err := c.Download(t.Context(), Model, "Org/Model.v2", "main", "sub/tokenizer.json")
		if err != nil {
			t.Fatalf("offline=%v: %v", offline, err)
		}
		if b, _ := os.ReadFile(got.Path); string(b) != content || !got.Cached || got.Commit != commitB {
			t.Errorf("offline=%v: %+v %q", offline, got, b)
		}
	}
	if reqs := f.requests(); len(reqs) != 0 {
		t.Errorf("asked %q", reqs)
	}
	// A dangling link (a blob Python's cache cleaner removed) is no file.
	os.Remove(filepath.Join(dir, "blobs", etag))
	c.Offline = true
	if _, err := c.Download(t.Context(), Model, "Org/Model.v2", "main", "sub/tokenizer.json"); !errors.Is(err, ErrOffline) {
		t.Errorf("dangling link: %v", err)
	}
}

func TestDownloadRenamedAndDataset(t *testing.T) {
	f := newFakeHub(t)
	c := f.config(t)
	got, err := c.Download(t.Context(), Model, "old/tok", "", "tokenizer.json")
	if err != nil {
		t.Fatalf("renamed repository (a same-host redirect): %v", err)
	}
	if !strings.Contains(got.Path, "models--old--tok") {
		t.Errorf("cached under %s, want the name asked for (as huggingface_hub does)", got.Path)
	}
	got, err = c.Download(t.Context(), Dataset, "ds/sharegpt", "", "data/train.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Path, filepath.Join("datasets--ds--sharegpt", "snapshots", commitA, "data", "train.jsonl")) {
		t.Errorf("dataset path %s", got.Path)
	}
	reqs := f.requests()
	if len(reqs) == 0 || !strings.HasPrefix(reqs[len(reqs)-2], "HEAD /datasets/ds/sharegpt/resolve/main/data/train.jsonl") {
		t.Errorf("requests %q", reqs)
	}
}

func TestValidRepoID(t *testing.T) {
	for id, want := range map[string]bool{
		"gpt2": true, "Qwen/Qwen3-0.6B": true, "meta-llama/Llama-3.1-8B-Instruct": true, "a_b/c.d": true,
		"": false, "a/b/c": false, "/abs": false, "a--b/c": false, "a/..": false, "./x": false, "a/b c": false,
		"a/-b": false, strings.Repeat("a", 97): false, "org/": false,
	} {
		if got := ValidRepoID(id); got != want {
			t.Errorf("ValidRepoID(%q) = %v", id, got)
		}
	}
}
