// Package hfhubtest is a fake Hugging Face Hub for tests: an httptest
// server answering resolve URLs (HEAD and GET) of the files added to it,
// with the headers the real Hub sends (X-Repo-Commit, ETag as the git
// blob sha1, X-Error-Code on 401 and 404), and LFS files (AddLFSFileAt)
// as a 302 to a CDN server on another host with X-Linked-Etag (sha256)
// and X-Linked-Size; the listing API (api/{models,datasets}/REPO/tree/REV/DIR)
// of the same files; and gated repositories (Denied). It touches no network.
package hfhubtest

import (
	"crypto/sha1" //nolint:gosec // git's blob names
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Server is a fake Hub. Safe for concurrent use.
type Server struct {
	*httptest.Server
	cdn   *httptest.Server
	lfs   map[string]bool   // repo \x00 commit \x00 name of LFS files
	blobs map[string]string // sha256 → content, served by cdn
	mu    sync.Mutex
	refs  map[string]map[string]string // repo → branch → commit
	files map[string]string            // repo \x00 commit \x00 name → content
	reqs  []string
	// denied are the repositories every request is refused for (status, X-Error-Code).
	denied map[string][2]string
}

// Commit is the commit every branch added with AddFile names unless
// AddFileAt gives another.
const Commit = "0123456789abcdef0123456789abcdef01234567"

// New starts a fake Hub; Close stops it.
func New() *Server {
	s := &Server{refs: map[string]map[string]string{}, files: map[string]string{}, lfs: map[string]bool{}, blobs: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	s.cdn = httptest.NewServer(http.HandlerFunc(s.serveCDN))
	return s
}

// Denied answers every request for repo (resolve and tree URLs) with
// status (401 or 403) and X-Error-Code code ("GatedRepo", or "" for a
// bare refusal), as the Hub answers for a gated repository.
func (s *Server) Denied(repo string, status int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denied == nil {
		s.denied = map[string][2]string{}
	}
	s.denied[repo] = [2]string{strconv.Itoa(status), code}
}

// deny answers a request for a Denied repository; false if it is not one.
func (s *Server) deny(w http.ResponseWriter, repo string) bool {
	d, ok := s.denied[repo]
	if !ok {
		return false
	}
	status, _ := strconv.Atoi(d[0])
	if d[1] != "" {
		w.Header().Set("X-Error-Code", d[1])
		w.Header().Set("X-Error-Message", "Access to "+strings.Replace(repo, "datasets/", "dataset ", 1)+" is restricted. You must have access to it and be authenticated to access it. Please log in.")
	}
	http.Error(w, "Access denied", status)
	return true
}

// serveTree answers the listing API, {models,datasets}/ORG/NAME/tree/REVISION[/DIR]:
// a JSON array of the files and folders directly in DIR, as
// huggingface_hub's list_repo_tree reads it.
func (s *Server) serveTree(w http.ResponseWriter, r *http.Request, p string) {
	parts := strings.SplitN(p, "/", 6)
	if len(parts) < 5 || parts[3] != "tree" || parts[0] != "models" && parts[0] != "datasets" {
		http.NotFound(w, r)
		return
	}
	repo := parts[1] + "/" + parts[2]
	if parts[0] == "datasets" {
		repo = "datasets/" + repo
	}
	rev, _ := url.PathUnescape(parts[4])
	dir := ""
	if len(parts) == 6 {
		dir, _ = url.PathUnescape(parts[5])
	}
	if s.deny(w, repo) {
		return
	}
	refs, ok := s.refs[repo]
	if !ok {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, "Repository not found", http.StatusUnauthorized)
		return
	}
	commit, ok := refs[rev]
	if !ok {
		w.Header().Set("X-Error-Code", "RevisionNotFound")
		http.Error(w, "Invalid rev id: "+rev, http.StatusNotFound)
		return
	}
	type entry struct {
		Type string `json:"type"`
		OID  string `json:"oid"`
		Size int    `json:"size"`
		Path string `json:"path"`
	}
	seen := map[string]bool{}
	out := []entry{}
	prefix := repo + "\x00" + commit + "\x00"
	if dir != "" {
		prefix += dir + "/"
	}
	for k, content := range s.files {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		name, _, isDir := strings.Cut(rest, "/")
		path := strings.TrimPrefix(dir+"/"+name, "/")
		if seen[path] {
			continue
		}
		seen[path] = true
		e := entry{Type: "file", Size: len(content), Path: path, OID: fmt.Sprintf("%x", sha1.Sum([]byte(content)))} //nolint:gosec // a name
		if isDir {
			e = entry{Type: "directory", Path: path, OID: "0000000000000000000000000000000000000000"}
		}
		out = append(out, e)
	}
	if len(out) == 0 && dir != "" {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, dir+" does not exist on "+rev, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

// Close stops the Hub and its CDN.
func (s *Server) Close() {
	s.Server.Close()
	s.cdn.Close()
}

// AddLFSFileAt serves content as an LFS file name of commit, which
// branch names: the Hub answers 302 to its CDN, as for Parquet files.
func (s *Server) AddLFSFileAt(repo, branch, commit, name, content string) {
	s.AddFileAt(repo, branch, commit, name, content)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lfs[repo+"\x00"+commit+"\x00"+name] = true
	sum := sha256.Sum256([]byte(content))
	s.blobs[hex.EncodeToString(sum[:])] = content
}

func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, "CDN "+r.Method+" "+r.URL.EscapedPath())
	content, ok := s.blobs[strings.TrimPrefix(r.URL.Path, "/blobs/")]
	if !ok || r.Header.Get("Authorization") != "" { // the token never goes to the CDN
		http.Error(w, "AccessDenied", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	if r.Method != http.MethodHead {
		w.Write([]byte(content))
	}
}

// AddFile serves content as name on the main branch of repo (a model id
// or "datasets/ORG/NAME").
func (s *Server) AddFile(repo, name, content string) {
	s.AddFileAt(repo, "main", Commit, name, content)
}

// AddFileAt serves content as name of commit, which branch names.
func (s *Server) AddFileAt(repo, branch, commit, name, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs[repo] == nil {
		s.refs[repo] = map[string]string{}
	}
	s.refs[repo][branch] = commit
	s.files[repo+"\x00"+commit+"\x00"+name] = content
}

// Requests returns the requests served so far ("METHOD PATH") and forgets them.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs
	s.reqs = nil
	return r
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, r.Method+" "+r.URL.EscapedPath())
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/")
	if api, ok := strings.CutPrefix(p, "api/"); ok {
		s.serveTree(w, r, api)
		return
	}
	prefix := ""
	if strings.HasPrefix(p, "datasets/") {
		prefix, p = "datasets/", strings.TrimPrefix(p, "datasets/")
	}
	parts := strings.SplitN(p, "/", 5)
	if len(parts) < 5 || parts[2] != "resolve" {
		http.NotFound(w, r)
		return
	}
	repo := prefix + parts[0] + "/" + parts[1]
	if s.deny(w, repo) {
		return
	}
	rev, _ := url.PathUnescape(parts[3])
	name, _ := url.PathUnescape(parts[4])
	refs, ok := s.refs[repo]
	if !ok {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		w.Header().Set("X-Error-Message", "Repository not found")
		http.Error(w, "Repository not found", http.StatusUnauthorized)
		return
	}
	commit, ok := refs[rev]
	if !ok {
		commit = rev
		found := false
		for _, c := range refs {
			found = found || c == rev
		}
		if !found {
			w.Header().Set("X-Error-Code", "RevisionNotFound")
			http.Error(w, "Invalid rev id: "+rev, http.StatusNotFound)
			return
		}
	}
	w.Header().Set("X-Repo-Commit", commit)
	content, ok := s.files[repo+"\x00"+commit+"\x00"+name]
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	if s.lfs[repo+"\x00"+commit+"\x00"+name] {
		sum := sha256.Sum256([]byte(content))
		w.Header().Set("X-Linked-Etag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(content)))
		w.Header().Set("ETag", `"pointer-`+hex.EncodeToString(sum[:8])+`"`)
		http.Redirect(w, r, s.cdn.URL+"/blobs/"+hex.EncodeToString(sum[:])+"?X-Amz-Signature=x", http.StatusFound)
		return
	}
	h := sha1.New() //nolint:gosec // git's blob names
	fmt.Fprintf(h, "blob %d\x00%s", len(content), content)
	w.Header().Set("ETag", `"`+hex.EncodeToString(h.Sum(nil))+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	if r.Method != http.MethodHead {
		w.Write([]byte(content))
	}
}
