package hfhub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxTreeBytes bounds the answer of one tree listing.
const maxTreeBytes = 16 << 20

// Entry is an item of a folder of a repository.
type Entry struct {
	// Path is the item's path from the repository's root.
	Path string `json:"path"`
	// Type is "file" or "directory".
	Type string `json:"type"`
	// Size is a file's size in bytes.
	Size int64 `json:"size"`
}

// Name is the last element of Path.
func (e Entry) Name() string { return e.Path[strings.LastIndexByte(e.Path, '/')+1:] }

// IsDir reports whether the entry is a folder.
func (e Entry) IsDir() bool { return e.Type == "directory" }

// TreeURL is the listing URL of a folder: Endpoint/api/{models,datasets}/REPO/tree/REVISION[/DIR],
// the revision escaped whole, as huggingface_hub's list_repo_tree asks.
func (c Config) TreeURL(t RepoType, repo, revision, dir string) string {
	u := c.Endpoint + "/api/" + string(t) + "s/" + repo + "/tree/" + url.PathEscape(revision)
	if dir != "" {
		segs := strings.Split(dir, "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		u += "/" + strings.Join(segs, "/")
	}
	return u
}

// List returns the items directly in the folder dir ("" is the root) of
// the repository at revision ("" is main), sorted by path. Offline
// (HF_HUB_OFFLINE) it lists what the cache's snapshot of the revision
// holds, which may be less than the Hub has; fromCache says so. Errors
// are an *Error as for Download (File is the folder).
func (c Config) List(ctx context.Context, t RepoType, repo, revision, dir string) (entries []Entry, fromCache bool, err error) {
	if revision == "" {
		revision = DefaultRevision
	}
	e := &Error{Repo: repo, Type: t, Revision: revision, File: dir + "/"}
	switch {
	case !ValidRepoID(repo):
		e.Err, e.Hint = ErrRepoNotFound, "a repository id is ORG/NAME of letters, digits, '-', '_' and '.'"
		return nil, false, e
	case !validPath(revision):
		e.Err, e.Hint = ErrRevisionNotFound, "a revision is a branch, a tag or a commit hash"
		return nil, false, e
	case dir != "" && !validPath(dir):
		panic("BUG: hfhub: bad folder name " + dir)
	}
	if c.Offline {
		entries, err := c.listCache(t, repo, revision, dir)
		if err != nil {
			e.Err, e.Detail = ErrOffline, err.Error()
			e.Hint = "unset HF_HUB_OFFLINE to ask the Hub"
			return nil, true, e
		}
		return entries, true, nil
	}
	e.URL = c.TreeURL(t, repo, revision, dir)
	req, err := c.request(ctx, http.MethodGet, e.URL)
	if err != nil {
		e.Err = err
		return nil, false, e
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, false, c.fail(e, metadata{}, err, "", revision, dir)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// The commit is left out: a folder is never recorded in .no_exist.
		m := metadata{status: resp.StatusCode, code: resp.Header.Get("X-Error-Code"), detail: clip(resp.Header.Get("X-Error-Message"))}
		return nil, false, c.fail(e, m, errStatus, "", revision, dir)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxTreeBytes+1))
	switch {
	case err != nil:
		return nil, false, c.fail(e, metadata{}, err, "", revision, dir)
	case len(b) > maxTreeBytes:
		return nil, false, c.fail(e, metadata{status: resp.StatusCode, detail: fmt.Sprintf("a listing over %d bytes", maxTreeBytes)}, ErrHub, "", revision, dir)
	}
	entries, err = decodeTree(b)
	if err != nil {
		return nil, false, c.fail(e, metadata{status: resp.StatusCode, detail: err.Error()}, ErrHub, "", revision, dir)
	}
	return entries, false, nil
}

// decodeTree reads a listing: a JSON array of {path, type, size}. Items
// whose path is not a relative path of clean segments are left out.
func decodeTree(b []byte) ([]Entry, error) {
	var entries []Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("the listing is not a JSON array of {path, type}: %v", err)
	}
	entries = slices.DeleteFunc(entries, func(x Entry) bool { return !validPath(x.Path) })
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return entries, nil
}

// listCache lists the folder dir of the cache's snapshot of revision.
func (c Config) listCache(t RepoType, repo, revision, dir string) ([]Entry, error) {
	root := c.RepoDir(t, repo)
	commit := revision
	if !IsCommit(revision) {
		b, err := os.ReadFile(filepath.Join(root, "refs", filepath.FromSlash(revision)))
		if err != nil {
			return nil, fmt.Errorf("the cache has no snapshot of %s (looked in %s)", revision, filepath.Join(root, "refs"))
		}
		commit = strings.TrimSpace(string(b))
	}
	p := filepath.Join(root, "snapshots", commit, filepath.FromSlash(dir))
	des, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("the cache has no folder %s", p)
	}
	var out []Entry
	for _, d := range des {
		x := Entry{Path: strings.TrimPrefix(dir+"/"+d.Name(), "/"), Type: "file"}
		if fi, err := os.Stat(filepath.Join(p, d.Name())); err == nil && fi.IsDir() { // Stat follows the blob links
			x.Type = "directory"
		} else if err == nil {
			x.Size = fi.Size()
		}
		out = append(out, x)
	}
	return out, nil
}
