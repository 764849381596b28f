package hfhub

import (
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzMetadata feeds arbitrary Hub headers to the HEAD reader: an answer
// is an error or a commit and ETag that are single path segments, so no
// header can make the cache write outside its folder.
func FuzzMetadata(f *testing.F) {
	f.Add(200, commitA, `"`+gitSHA1("x")+`"`, "", "1", "")
	f.Add(302, commitA, `W/"x"`, `"`+sha256Hex("x")+`"`, "", "https://cdn/x")
	f.Add(404, commitA, "", "", "", "")
	f.Add(200, "../../etc", "..", "a/b", "-1", "")
	f.Fuzz(func(t *testing.T, status int, commit, etag, linked, size, loc string) {
		if status < 100 || status > 999 {
			return
		}
		h := http.Header{}
		for k, v := range map[string]string{"X-Repo-Commit": commit, "ETag": etag, "X-Linked-Etag": linked, "Content-Length": size, "Location": loc} {
			if v != "" {
				h.Set(k, v)
			}
		}
		u, _ := url.Parse("https://hub.example/org/m/resolve/main/f")
		m, err := readMetadata(&http.Response{StatusCode: status, Header: h, Request: &http.Request{URL: u}})
		if err != nil {
			return
		}
		for _, seg := range []string{m.commit, m.etag} {
			dir := filepath.Join("/cache", "blobs")
			if p := filepath.Join(dir, seg); filepath.Dir(p) != dir || strings.ContainsAny(seg, "/\\") {
				t.Fatalf("segment %q leaves the cache folder: %s", seg, p)
			}
		}
		if m.size < -1 {
			t.Fatalf("size %d", m.size)
		}
	})
}

// FuzzRepoID: an id ValidRepoID accepts names one folder right under the
// cache, and a revision or file validPath accepts stays under it.
func FuzzRepoID(f *testing.F) {
	for _, s := range []string{"org/name", "gpt2", "../x", "a/b/c", "a--b", "refs/pr/1", "x/../../y"} {
		f.Add(s, "main", "tokenizer.json")
	}
	f.Fuzz(func(t *testing.T, id, rev, file string) {
		c := Config{CacheDir: "/cache"}
		if ValidRepoID(id) {
			if d := c.RepoDir(Model, id); filepath.Dir(d) != "/cache" {
				t.Fatalf("repo %q: folder %s", id, d)
			}
		}
		for _, p := range []string{rev, file} {
			if validPath(p) {
				if j := filepath.Join("/cache/x", filepath.FromSlash(p)); !strings.HasPrefix(j, "/cache/x/") {
					t.Fatalf("path %q leaves: %s", p, j)
				}
			}
		}
	})
}

// FuzzDecodeTree: a listing decodes to an error or to sorted entries whose
// paths are clean relative paths with a non-empty last element.
func FuzzDecodeTree(f *testing.F) {
	f.Add(`[{"type":"directory","oid":"0","size":0,"path":"default"},{"type":"file","size":12,"path":"README.md"}]`)
	f.Add(`[{"type":"directory","path":"../x"},{"path":"a//b"},{"path":""}]`)
	f.Add(`{"error":"Repository not found"}`)
	f.Add(`[1, null, "x"]`)
	f.Fuzz(func(t *testing.T, body string) {
		entries, err := decodeTree([]byte(body))
		if err != nil {
			return
		}
		for i, e := range entries {
			if !validPath(e.Path) || e.Name() == "" {
				t.Fatalf("entry %+v: not a clean path", e)
			}
			if i > 0 && entries[i-1].Path > e.Path {
				t.Fatalf("not sorted: %q before %q", entries[i-1].Path, e.Path)
			}
		}
	})
}
