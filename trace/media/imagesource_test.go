package media

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSolidPNG(t *testing.T, path string, c color.NRGBA) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 4, 3))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImageSource: images are source files of the directory, picked per
// image (seeded), resized to the drawn size; without sizes, the source's
// own; a directory without images or with a corrupt one is an error
// naming it.
func TestImageSource(t *testing.T) {
	dir := t.TempDir()
	red, blue := color.NRGBA{255, 0, 0, 255}, color.NRGBA{0, 0, 255, 255}
	writeSolidPNG(t, filepath.Join(dir, "a.png"), red)
	writeSolidPNG(t, filepath.Join(dir, "b.png"), blue)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an image"), 0o644)
	g := NewGenerator(SyntheticConfig{Images: 1, ImageWidthMean: 8, ImageHeightMean: 6, ImageSource: dir}, 3)
	seen := map[color.NRGBA]int{}
	for i := range uint64(16) {
		ps, err := g.Request(nil, i)
		if err != nil {
			t.Fatal(err)
		}
		it := ps[0].Item
		img, err := png.Decode(bytes.NewReader(it.Data))
		if err != nil || it.Width != 8 || it.Height != 6 || img.Bounds().Dx() != 8 || img.Bounds().Dy() != 6 {
			t.Fatalf("request %d: %dx%d %v", i, it.Width, it.Height, err)
		}
		c := color.NRGBAModel.Convert(img.At(5, 4)).(color.NRGBA)
		if c != red && c != blue {
			t.Fatalf("request %d: pixel %v is from no source", i, c)
		}
		seen[c]++
	}
	if len(seen) != 2 {
		t.Errorf("16 images used %v: want both sources", seen)
	}
	ps, err := NewGenerator(SyntheticConfig{Images: 1, ImageSource: dir, ImageFormat: "jpeg"}, 3).Request(nil, 0)
	if err != nil || ps[0].Item.Width != 4 || ps[0].Item.Height != 3 || ps[0].Item.Format != "jpeg" {
		t.Fatalf("source size: %+v %v", ps, err)
	}
	empty := t.TempDir()
	if _, err := NewGenerator(SyntheticConfig{Images: 1, ImageSource: empty}, 1).Request(nil, 0); err == nil || !strings.Contains(err.Error(), "no .png") {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(empty, "bad.png"), []byte("\x89PNG\r\n\x1a\nbroken"), 0o644)
	if _, err := NewGenerator(SyntheticConfig{Images: 1, ImageSource: empty}, 1).Request(nil, 0); err == nil || !strings.Contains(err.Error(), "bad.png") {
		t.Errorf("corrupt file: %v", err)
	}
	var probs []string
	c := SyntheticConfig{ImageSourceSampling: "sequential"}
	c.Problems(func(f, format string, args ...any) { probs = append(probs, f) })
	if len(probs) != 1 || probs[0] != "ImageSourceSampling" {
		t.Errorf("problems %v", probs)
	}
}
