// Package hfhubtest is a fake Hugging Face Hub for tests: an httptest
// server answering resolve URLs (HEAD and GET) of the files added to it,
// with the headers the real Hub sends (X-Repo-Commit, ETag as the git
// blob sha1, X-Error-Code on 401 and 404). It touches no network.
package hfhubtest

import (
	"crypto/sha1" //nolint:gosec // git's blob names
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
	s := &Server{refs: map[string]map[string]string{}, files: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
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
	h := sha1.New() //nolint:gosec // git's blob names
	fmt.Fprintf(h, "blob %d\x00%s", len(content), content)
	w.Header().Set("ETag", `"`+hex.EncodeToString(h.Sum(nil))+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(content)))
	if r.Method != http.MethodHead {
		w.Write([]byte(content))
	}
}
