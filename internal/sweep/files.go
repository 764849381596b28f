package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Files of a sweep directory.
const (
	// ManifestFile is the sweep manifest: the plan, each point's status
	// and row, the stop, the Pareto front and knee, the search result.
	ManifestFile = "sweep.json"
	// TableFile is the sweep table as Parquet, one row per measured
	// point.
	TableFile = "sweep.parquet"
	// PointsDir holds one directory per point, named by its settings.
	PointsDir = "points"
	// BeforePointLog is the output of Config.BeforePoint in a point's
	// directory.
	BeforePointLog = "before-point.log"
)

// writeJSON writes v as indented JSON to path atomically: a temporary
// file in the same directory, synced, then renamed over path, so a crash
// leaves the old file or the new one, never a cut one.
func writeJSON(path string, v any) (err error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	b = append(b, '\n')
	return writeFileAtomic(path, b)
}

func writeFileAtomic(path string, b []byte) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
