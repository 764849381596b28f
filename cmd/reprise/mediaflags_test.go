package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/reprise-bench/reprise/trace/media"
)

// writeImageSource writes a directory of two images for --image-source.
func writeImageSource(t *testing.T, dir string) string {
	t.Helper()
	d := filepath.Join(dir, "images")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{"png", "jpeg"} {
		it, err := media.SynthImage(media.ImageSpec{Width: 40, Height: 30, Format: f, Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "img"+string(rune('0'+i))+"."+f), it.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}
