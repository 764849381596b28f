// Package hfhubtest is a fake Hugging Face Hub for tests: an httptest
// server answering resolve URLs (HEAD and GET) of the files added to it,
// with the headers the real Hub sends (X-Repo-Commit, ETag as the git
// blob sha1, X-Error-Code on 401 and 404), and LFS files (AddLFSFileAt)
// as a 302 to a CDN server on another host with X-Linked-Etag (sha256)
// and X-Linked-Size. It touches no network.
package hfhubtest

import (
	"crypto/sha1" //nolint:gosec // git's blob names
	"crypto/sha256"
	"encoding/hex"
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
