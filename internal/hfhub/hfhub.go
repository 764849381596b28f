package hfhub

import (
	"context"
	"crypto/sha1" //nolint:gosec // git names blobs by sha1; it checks a download, it guards nothing
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The errors a download can wrap (match them with errors.Is).
var (
	// ErrRepoNotFound: no such repository, or a private one the token
	// does not open (the Hub answers both alike).
	ErrRepoNotFound = errors.New("repository not found")
	// ErrRevisionNotFound: the repository has no such branch, tag or
	// commit.
	ErrRevisionNotFound = errors.New("revision not found")
	// ErrEntryNotFound: the revision has no such file.
	ErrEntryNotFound = errors.New("file not found in the repository")
	// ErrGated: the repository is gated and the token has not been
	// granted access.
	ErrGated = errors.New("gated repository")
	// ErrUnauthorized: the Hub refused the request (HTTP 401 or 403)
	// without saying more.
	ErrUnauthorized = errors.New("not authorized")
	// ErrOffline: the file is not in the cache and downloads are off
	// (HF_HUB_OFFLINE).
	ErrOffline = errors.New("not in the local cache and HF_HUB_OFFLINE is set")
	// ErrIntegrity: the bytes received differ in size or hash from what
	// the Hub announced; nothing was written to the cache.
	ErrIntegrity = errors.New("download does not match what the Hub announced")
	// ErrHub: any other answer of the Hub (a 5xx, a missing header).
	ErrHub = errors.New("unexpected answer from the Hub")
)

// DefaultEndpoint is the public Hub, used when HF_ENDPOINT is unset.
const DefaultEndpoint = "https://huggingface.co"

// DefaultMaxBytes bounds one downloaded file when the Hub does not
// announce its size.
const DefaultMaxBytes int64 = 4 << 30

// DefaultRevision is the branch asked for when none is given.
const DefaultRevision = "main"

// RepoType is the kind of repository: models and datasets live under
// different URLs and cache folders.
type RepoType string

// The repository types.
const (
	Model   RepoType = "model"
	Dataset RepoType = "dataset"
)

// Config says where the Hub and the cache are. The zero value is not
// usable: build it with [FromEnv] and change fields as needed. Safe for
// concurrent use (each Download only reads it).
type Config struct {
	// Endpoint is the Hub's root URL, without a trailing slash.
	Endpoint string
	// Token is sent as "Authorization: Bearer TOKEN" to Endpoint's host
	// (never to the CDN a download is redirected to); "" sends none.
	Token string
	// CacheDir is the hub cache directory (the folder holding
	// models--ORG--NAME).
	CacheDir string
	// Offline answers from the cache only.
	Offline bool
	// Client sends the requests; nil uses one with a 10-minute timeout.
	Client *http.Client
	// MaxBytes bounds a file whose size the Hub does not announce (0:
	// DefaultMaxBytes).
	MaxBytes int64
}

// FromEnv returns the configuration huggingface_hub would use, from the
// environment: HF_ENDPOINT, HF_TOKEN (or the file HF_TOKEN_PATH, default
// $HF_HOME/token, written by `hf auth login`), HF_HUB_OFFLINE (or
// TRANSFORMERS_OFFLINE), and the cache: HF_HUB_CACHE, else $HF_HOME/hub,
// with HF_HOME defaulting to $XDG_CACHE_HOME/huggingface, then
// ~/.cache/huggingface.
func FromEnv() Config {
	home, _ := os.UserHomeDir()
	return fromEnv(os.Getenv, home)
}

func fromEnv(getenv func(string) string, home string) Config {
	c := Config{Endpoint: strings.TrimRight(getenv("HF_ENDPOINT"), "/")}
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	hfHome := getenv("HF_HOME")
	if hfHome == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			hfHome = filepath.Join(x, "huggingface")
		} else {
			hfHome = filepath.Join(home, ".cache", "huggingface")
		}
	}
	c.CacheDir = firstOf(getenv("HF_HUB_CACHE"), getenv("HUGGINGFACE_HUB_CACHE"), filepath.Join(hfHome, "hub"))
	c.Token = strings.TrimSpace(firstOf(getenv("HF_TOKEN"), getenv("HUGGING_FACE_HUB_TOKEN")))
	if c.Token == "" {
		path := firstOf(getenv("HF_TOKEN_PATH"), filepath.Join(hfHome, "token"))
		if b, err := os.ReadFile(path); err == nil && len(b) < 4096 {
			c.Token = strings.TrimSpace(string(b))
		}
	}
	c.Offline = isTrue(firstOf(getenv("HF_HUB_OFFLINE"), getenv("TRANSFORMERS_OFFLINE")))
	return c
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// isTrue reads a boolean environment variable as huggingface_hub does.
func isTrue(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "1", "ON", "YES", "TRUE":
		return true
	}
	return false
}

// File is a file in the cache.
type File struct {
	// Path is the file in the snapshot folder (a symlink to its blob).
	Path string
	// Commit is the commit the revision named.
	Commit string
	// Cached is true when no request was made.
	Cached bool
	// URL is the resolve URL of the file.
	URL string
}

// Error is a download that failed: which file, which URL, what the Hub
// said and what to do.
type Error struct {
	Repo     string
	Type     RepoType
	Revision string
	File     string
	// URL is the resolve URL asked ("" when nothing was asked).
	URL string
	// Status is the HTTP status (0 without an answer).
	Status int
	// Detail is the Hub's message (X-Error-Message), or the cause.
	Detail string
	// Hint says what to do.
	Hint string
	// Err is one of the ErrXxx sentinels, or a transport error.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "hugging face hub: %s %s at revision %s: %v", repoLabel(e.Type, e.Repo), e.File, e.Revision, e.Err)
	if e.Status != 0 || e.URL != "" {
		b.WriteString(" (")
		if e.Status != 0 {
			fmt.Fprintf(&b, "HTTP %d from ", e.Status)
		}
		b.WriteString(e.URL)
		if e.Detail != "" {
			b.WriteString(": " + e.Detail)
		}
		b.WriteString(")")
	} else if e.Detail != "" {
		b.WriteString(" (" + e.Detail + ")")
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

// Unwrap returns the sentinel or transport error.
func (e *Error) Unwrap() error { return e.Err }

func repoLabel(t RepoType, repo string) string {
	if t == Dataset {
		return "dataset " + repo
	}
	return "model " + repo
}

// ValidRepoID reports whether id is a repository id the Hub accepts:
// "NAME" or "ORG/NAME" of letters, digits, '-', '_' and '.', without "--"
// or "..", at most 96 characters.
func ValidRepoID(id string) bool {
	if id == "" || len(id) > 96 || strings.Contains(id, "--") || strings.Contains(id, "..") {
		return false
	}
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || p[0] == '-' || p[0] == '.' || p[len(p)-1] == '-' || p[len(p)-1] == '.' {
			return false
		}
		for i := 0; i < len(p); i++ {
			c := p[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				return false
			}
		}
	}
	return true
}

// validPath reports whether p is a relative slash-separated path with no
// empty, "." or ".." segment and no control character.
func validPath(p string) bool {
	if p == "" || len(p) > 1024 || strings.ContainsRune(p, '\\') {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// IsCommit reports whether rev is a full commit hash (40 lower-case hex
// digits), which the cache stores as a snapshot without a ref.
func IsCommit(rev string) bool { return isHex(rev, 40) }

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// RepoDir is the cache folder of a repository: CacheDir/models--ORG--NAME.
func (c Config) RepoDir(t RepoType, repo string) string {
	return filepath.Join(c.CacheDir, string(t)+"s--"+strings.ReplaceAll(repo, "/", "--"))
}

// URL is the resolve URL of a file: Endpoint/[datasets/]REPO/resolve/REVISION/FILE,
// the revision escaped whole ("refs/pr/1" is one path segment).
func (c Config) URL(t RepoType, repo, revision, file string) string {
	prefix := ""
	if t == Dataset {
		prefix = "datasets/"
	}
	segs := strings.Split(file, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return c.Endpoint + "/" + prefix + repo + "/resolve/" + url.PathEscape(revision) + "/" + strings.Join(segs, "/")
}

// Download returns the cached path of file at revision ("" is main) of
// the repository, downloading it when the cache lacks it. The file is
// never run or parsed here.
func (c Config) Download(ctx context.Context, t RepoType, repo, revision, file string) (File, error) {
	if revision == "" {
		revision = DefaultRevision
	}
	e := &Error{Repo: repo, Type: t, Revision: revision, File: file}
	switch {
	case t != Model && t != Dataset:
		panic("BUG: hfhub: unknown repository type " + string(t))
	case !ValidRepoID(repo):
		e.Err, e.Hint = ErrRepoNotFound, "a repository id is ORG/NAME of letters, digits, '-', '_' and '.'"
		return File{}, e
	case !validPath(revision):
		e.Err, e.Hint = ErrRevisionNotFound, "a revision is a branch, a tag or a commit hash"
		return File{}, e
	case !validPath(file):
		panic("BUG: hfhub: bad file name " + strconv.Quote(file))
	}
	dir := c.RepoDir(t, repo)
	f := File{URL: c.URL(t, repo, revision, file)}
	if path, commit, absent := lookup(dir, revision, file); path != "" {
		f.Path, f.Commit, f.Cached = path, commit, true
		return f, nil
	} else if absent {
		e.Err, e.Hint = ErrEntryNotFound, fmt.Sprintf("the cache records that commit %s has no such file (remove %s to ask again)", commit, filepath.Join(dir, ".no_exist", commit))
		return File{}, e
	}
	if c.Offline {
		e.Err, e.Detail = ErrOffline, "looked in "+filepath.Join(dir, "snapshots")
		kind := ""
		if t == Dataset {
			kind = " --repo-type dataset"
		}
		e.Hint = fmt.Sprintf("unset HF_HUB_OFFLINE to download it, or fetch it first (hf download %s %s%s --revision %s)", repo, file, kind, revision)
		return File{}, e
	}
	e.URL = f.URL
	meta, err := c.head(ctx, f.URL)
	if err != nil {
		return File{}, c.fail(e, meta, err, dir, revision, file)
	}
	f.Commit = meta.commit
	snap := filepath.Join(dir, "snapshots", meta.commit, filepath.FromSlash(file))
	blob := filepath.Join(dir, "blobs", meta.etag)
	if _, err := os.Stat(snap); err != nil {
		if _, err := os.Stat(blob); err != nil {
			if err := c.get(ctx, meta, blob); err != nil {
				return File{}, c.fail(e, meta, err, dir, revision, file)
			}
		}
		if err := link(blob, snap); err != nil {
			e.Err = fmt.Errorf("write the cache: %w", err)
			return File{}, e
		}
	}
	if revision != meta.commit {
		if err := writeRef(dir, revision, meta.commit); err != nil {
			e.Err = fmt.Errorf("write the cache: %w", err)
			return File{}, e
		}
	}
	f.Path = snap
	return f, nil
}

// lookup finds file in the cache: its snapshot path, or absent when the
// cache records the Hub saying the commit lacks it.
func lookup(dir, revision, file string) (path, commit string, absent bool) {
	commit = revision
	if !IsCommit(revision) {
		b, err := os.ReadFile(filepath.Join(dir, "refs", filepath.FromSlash(revision)))
		if err != nil {
			return "", "", false
		}
		commit = strings.TrimSpace(string(b))
		if !validPath(commit) || strings.Contains(commit, "/") {
			return "", "", false // a damaged ref: ask again
		}
	}
	p := filepath.Join(dir, "snapshots", commit, filepath.FromSlash(file))
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() { // Stat follows the link: a dangling one is no file
		return p, commit, false
	}
	if _, err := os.Stat(filepath.Join(dir, ".no_exist", commit, filepath.FromSlash(file))); err == nil {
		return "", commit, true
	}
	return "", "", false
}

// metadata is what the HEAD request said.
type metadata struct {
	status int
	commit string
	etag   string
	size   int64  // -1: not announced
	get    string // the URL to GET (the CDN location of a redirect, else the resolve URL)
	detail string
	code   string // X-Error-Code
}

func (c Config) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return &http.Client{Timeout: 10 * time.Minute}
}

// request builds a request with the token when it goes to the Hub itself.
func (c Config) request(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "reprise-hfhub")
	if c.Token != "" {
		if hub, err := url.Parse(c.Endpoint); err == nil && hub.Host == req.URL.Host {
			req.Header.Set("Authorization", "Bearer "+c.Token)
		}
	}
	return req, nil
}

// head asks the Hub for the file's commit, ETag and size. Redirects to
// the same host (a renamed repository) are followed; one to another host
// (the CDN of an LFS file) is not: its Location is where to GET.
func (c Config) head(ctx context.Context, u string) (metadata, error) {
	m := metadata{size: -1}
	hc := *c.client()
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		if req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		return nil
	}
	req, err := c.request(ctx, http.MethodHead, u)
	if err != nil {
		return m, err
	}
	req.Header.Set("Accept-Encoding", "identity") // the size of the file, not of a compressed answer
	resp, err := hc.Do(req)
	if err != nil {
		return m, err
	}
	resp.Body.Close()
	return readMetadata(resp)
}

// readMetadata reads the headers of the Hub's answer to a HEAD.
func readMetadata(resp *http.Response) (metadata, error) {
	h := resp.Header
	m := metadata{status: resp.StatusCode, size: -1, commit: h.Get("X-Repo-Commit"), code: h.Get("X-Error-Code"),
		detail: clip(h.Get("X-Error-Message"))}
	if resp.StatusCode >= 400 {
		return m, errStatus
	}
	m.get = resp.Request.URL.String()
	if resp.StatusCode >= 300 {
		loc, err := resp.Location()
		if err != nil {
			m.detail = "a redirect without a Location"
			return m, ErrHub
		}
		m.get = loc.String()
	} else if resp.StatusCode != http.StatusOK {
		m.detail = "HEAD answered " + resp.Status
		return m, ErrHub
	}
	m.etag = normalizeETag(firstOf(h.Get("X-Linked-Etag"), h.Get("ETag")))
	if s := firstOf(h.Get("X-Linked-Size"), h.Get("Content-Length")); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
			m.size = n
		}
	}
	switch {
	case m.commit == "" || !validPath(m.commit) || strings.Contains(m.commit, "/"):
		m.detail = "no X-Repo-Commit header naming the commit (is HF_ENDPOINT a Hugging Face Hub?)"
		return m, ErrHub
	case m.etag == "" || !validPath(m.etag) || strings.Contains(m.etag, "/"):
		m.detail = "no ETag header naming the file's version (is HF_ENDPOINT a Hugging Face Hub?)"
		return m, ErrHub
	}
	return m, nil
}

// errStatus marks an HTTP error status, mapped by fail.
var errStatus = errors.New("http error")

// normalizeETag drops a weak marker and the quotes.
func normalizeETag(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "W/")
	return strings.Trim(s, `"`)
}

// fail maps what went wrong to an Error with a hint; a missing file the
// Hub names a commit for is recorded in .no_exist, as huggingface_hub
// does, so the next lookup asks nothing.
func (c Config) fail(e *Error, m metadata, err error, dir, revision, file string) error {
	e.Status, e.Detail = m.status, m.detail
	login := "log in with `hf auth login` or set HF_TOKEN (or HF_TOKEN_PATH)"
	if c.Token != "" {
		login = "the token given (HF_TOKEN, HF_TOKEN_PATH or `hf auth login`) has no access to it"
	}
	page := c.Endpoint + "/" + e.Repo
	if e.Type == Dataset {
		page = c.Endpoint + "/datasets/" + e.Repo
	}
	switch {
	case !errors.Is(err, errStatus):
		e.Err = err
		if !errors.Is(err, ErrIntegrity) && !errors.Is(err, ErrHub) {
			e.Hint = "check the network and HF_ENDPOINT, or set HF_HUB_OFFLINE=1 to use the cache only"
		}
	case m.code == "GatedRepo" || (m.status == http.StatusForbidden && strings.Contains(strings.ToLower(m.detail), "gated")):
		e.Err, e.Hint = ErrGated, "ask for access on "+page+", then "+login
	case m.code == "RepoNotFound" || (m.status == http.StatusUnauthorized && m.code == ""):
		e.Err, e.Hint = ErrRepoNotFound, "check the name "+e.Repo+"; if it is private or gated, "+login
	case m.code == "RevisionNotFound":
		e.Err, e.Hint = ErrRevisionNotFound, "check the revision "+revision+" (a branch, a tag or a commit of "+page+")"
	case m.code == "EntryNotFound" || m.status == http.StatusNotFound:
		e.Err, e.Hint = ErrEntryNotFound, "the repository has no "+file+" at "+revision+" (see "+page+"/tree/"+url.PathEscape(revision)+")"
		if m.code == "" {
			e.Hint = "check the name " + e.Repo + " and that it has " + file + " at " + revision
		}
		if m.commit != "" && validPath(m.commit) && !strings.Contains(m.commit, "/") {
			_ = markAbsent(dir, m.commit, file) // a cache we cannot write only costs a request next time
			if revision != m.commit {
				_ = writeRef(dir, revision, m.commit)
			}
		}
	case m.status == http.StatusUnauthorized || m.status == http.StatusForbidden:
		e.Err, e.Hint = ErrUnauthorized, login
	default:
		e.Err, e.Hint = ErrHub, "try again later, or set HF_HUB_OFFLINE=1 to use the cache only"
	}
	return e
}

// get downloads the file into a temporary file beside blob, checks its
// size and hash against the HEAD's answer, then renames it to blob.
func (c Config) get(ctx context.Context, m metadata, blob string) error {
	req, err := c.request(ctx, http.MethodGet, m.get)
	if err != nil {
		return err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%w: GET %s answered %s: %s", ErrHub, m.get, resp.Status, clip(string(b)))
	}
	if err := os.MkdirAll(filepath.Dir(blob), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(blob), filepath.Base(blob)+".*.incomplete")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	limit := m.size
	if limit < 0 {
		limit = c.MaxBytes
		if limit <= 0 {
			limit = DefaultMaxBytes
		}
	}
	sum := checker(m.etag, m.size)
	w := io.Writer(tmp)
	if sum != nil {
		w = io.MultiWriter(tmp, sum)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w after %d bytes", m.get, err, n)
	}
	switch {
	case m.size >= 0 && n != m.size:
		return fmt.Errorf("%w: got %d bytes of the %d announced", ErrIntegrity, n, m.size)
	case m.size < 0 && n > limit:
		return fmt.Errorf("%w: over %d bytes", ErrIntegrity, limit)
	case sum != nil && hex.EncodeToString(sum.Sum(nil)) != m.etag:
		return fmt.Errorf("%w: the bytes' hash is %s, the ETag %s", ErrIntegrity, hex.EncodeToString(sum.Sum(nil)), m.etag)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), blob); err != nil {
		return err
	}
	done = true
	return nil
}

// checker returns the hash the ETag is of: sha256 (64 hex digits: an LFS
// file's X-Linked-Etag) or git's blob sha1 (40: a file in git), or nil
// for another ETag, which is then not checked.
func checker(etag string, size int64) hash.Hash {
	switch {
	case isHex(etag, 64):
		return sha256.New()
	case isHex(etag, 40) && size >= 0:
		h := sha1.New() //nolint:gosec // see the import
		fmt.Fprintf(h, "blob %d\x00", size)
		return h
	}
	return nil
}

// link points snap at blob with a relative symlink (as huggingface_hub
// does), replacing what was there; where symlinks are refused it copies.
func link(blob, snap string) error {
	if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Dir(snap), blob)
	if err != nil {
		return err
	}
	tmp := snap + ".tmp-link-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.Symlink(rel, tmp); err != nil {
		return copyFile(blob, snap)
	}
	if err := os.Rename(tmp, snap); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writeAtomic(to, data)
}

// writeRef records that revision names commit.
func writeRef(dir, revision, commit string) error {
	return writeAtomic(filepath.Join(dir, "refs", filepath.FromSlash(revision)), []byte(commit))
}

// markAbsent records that commit has no file.
func markAbsent(dir, commit, file string) error {
	return writeAtomic(filepath.Join(dir, ".no_exist", commit, filepath.FromSlash(file)), nil)
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func clip(s string) string {
	const n = 300
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
