package mlflow

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// DefaultArtifactGlobs are the run directory's files uploaded when no
// --mlflow-artifact-glob is given: AIPerf's list.
var DefaultArtifactGlobs = []string{"*.json", "*.csv", "*.jsonl", "*.parquet", "*_timeslices.*",
	"**/*.png", "**/*.jpg", "**/*.jpeg", "**/*.svg", "**/*.html"}

// Artifacts returns the regular files under dir whose slash-separated
// path relative to dir matches one of globs (path.Match patterns; a
// leading **/ matches in every directory, dir itself included), in walk
// order. Hidden files (temporary ones) are left out.
func Artifacts(dir string, globs []string) ([]Artifact, error) {
	var out []Artifact
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if matchAny(globs, rel) {
			out = append(out, Artifact{Path: rel, File: p})
		}
		return nil
	})
	return out, err
}

func matchAny(globs []string, rel string) bool {
	for _, g := range globs {
		if rest, ok := strings.CutPrefix(g, "**/"); ok {
			if m, _ := path.Match(rest, path.Base(rel)); m {
				return true
			}
			continue
		}
		if m, _ := path.Match(g, rel); m {
			return true
		}
	}
	return false
}
