package testfiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Checks on the repository as a whole; they live here because this
// package already finds the module root.

var (
	// urlRE matches a URL, whose path is not a file of the repository.
	urlRE = regexp.MustCompile(`https?://[^\s)>\]"'` + "`" + `]+`)
	// mdRE matches a cited Markdown file, a path relative to the citing
	// file or to the module root, or a glob of one.
	mdRE = regexp.MustCompile(`[A-Za-z0-9_./*-]*[A-Za-z0-9_*-]\.md\b`)
	// sectionRE matches a document cited by name and section without its
	// extension: "platform-notes §7".
	sectionRE = regexp.MustCompile(`\b([a-z][a-z0-9]*(?:-[a-z0-9]+)+) §`)
	// notesRE matches the names of notes that are not part of the
	// repository and must not be cited.
	// linkRE matches the target of a Markdown link: [text](target).
	linkRE  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	notesRE = regexp.MustCompile(`\b(benchmark-semantics|adapter-abi-notes|kv-cache-stats|trace-formats|platform-notes)\b|issue [0-9]+'s closing note`)
)

// TestCitedDocsExist fails when a Go file or a Markdown document of the
// module cites a Markdown file that the repository does not have, or a
// Markdown document has a relative link that does not resolve: every
// document the code and docs point at must exist in the repository.
func TestCitedDocsExist(t *testing.T) {
	root := Root(t)
	var files []string
	names := map[string]bool{} // base names of every Markdown file
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, filepath.Join("internal", "testfiles", "repo_test.go")) {
			return nil // this file names the patterns it looks for
		}
		switch filepath.Ext(p) {
		case ".md":
			names[d.Name()] = true
			files = append(files, p)
		case ".go":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(dir, ref string) bool {
		for _, base := range []string{dir, root} {
			if m, _ := filepath.Glob(filepath.Join(base, filepath.FromSlash(ref))); len(m) > 0 {
				return true
			}
		}
		// A bare name ("adapter-abi.md §2") names a document by itself.
		return !strings.Contains(ref, "/") && names[ref]
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(data), "\n") {
			if filepath.Ext(p) == ".md" {
				for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
					target, _, _ := strings.Cut(m[1], "#")
					if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
						continue
					}
					if _, err := os.Stat(filepath.Join(filepath.Dir(p), filepath.FromSlash(target))); err != nil {
						t.Errorf("%s:%d: links to %s, which does not resolve from the file's directory", rel, i+1, m[1])
					}
				}
			}
			line = urlRE.ReplaceAllString(line, "")
			for _, ref := range mdRE.FindAllString(line, -1) {
				if !exists(filepath.Dir(p), ref) {
					t.Errorf("%s:%d: cites %s, which is not in the repository", rel, i+1, ref)
				}
			}
			for _, m := range sectionRE.FindAllStringSubmatch(line, -1) {
				if !names[m[1]+".md"] {
					t.Errorf("%s:%d: cites %q, which is not a document of the repository", rel, i+1, m[0])
				}
			}
			for _, m := range notesRE.FindAllString(line, -1) {
				if !names[m+".md"] {
					t.Errorf("%s:%d: cites %s, which is not in the repository; cite docs/reference/ instead", rel, i+1, m)
				}
			}
		}
	}
}
