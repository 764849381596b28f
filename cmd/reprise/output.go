package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reprise-bench/reprise/internal/exitcode"
)

// writeOutput runs fill on stdout, or on a temporary file renamed to path
// once fill succeeded, so a failure leaves no partial file. A path that
// exists and is not a regular file (/dev/null, a named pipe) is written
// directly: renaming over it would replace the device. An error of fill
// is returned as it is.
func writeOutput(stdout io.Writer, path string, fill func(io.Writer) error) error {
	if path == "-" {
		return fill(stdout)
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return exitcode.UsageError(fmt.Errorf("--output: %w", err), "check that it is writable")
		}
		if err := fill(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		return nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--output: %w", err), "check that the directory exists and is writable")
	}
	// CreateTemp makes the file private (0600); an output is data to share.
	err = f.Chmod(0o644)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeReport writes through fn to stdout, or to path when it is set and
// not "-".
func writeReport(stdout io.Writer, path string, fn func(io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--output: %w", err), "")
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
