package media

import (
	"bytes"
	"fmt"
	"image"
	"image/draw"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// loadSources decodes every PNG, JPEG and GIF file of dir, in name order
// (AIPerf's --image-source). Each file is probed first (its header against
// the pixel cap, so a decompression bomb is refused unread); a file that
// does not decode, or a directory without images, is an error naming it.
func loadSources(dir string) ([]image.Image, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("image source: %w", err)
	}
	var out []image.Image
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".png", ".jpg", ".jpeg", ".gif":
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		path := filepath.Join(dir, n)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("image source: %w", err)
		}
		if _, err := Probe(Image, b, Limits{}); err != nil {
			return nil, fmt.Errorf("image source %s: %w", path, err)
		}
		img, _, err := image.Decode(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("image source %s: %w", path, err)
		}
		out = append(out, img)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("image source %s: no .png, .jpg, .jpeg or .gif file in it", dir)
	}
	return out, nil
}

// sourceImage renders src at w × h (nearest neighbour; the source size
// when w or h is 0) in format, as AIPerf resizes a sampled source image to
// the drawn size.
func sourceImage(src image.Image, w, h int, format string) (Item, error) {
	b := src.Bounds()
	if w <= 0 || h <= 0 {
		w, h = b.Dx(), b.Dy()
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	if w == b.Dx() && h == b.Dy() {
		draw.Draw(dst, dst.Bounds(), src, b.Min, draw.Src)
	} else {
		for y := range h {
			sy := b.Min.Y + y*b.Dy()/h
			for x := range w {
				dst.Set(x, y, src.At(b.Min.X+x*b.Dx()/w, sy))
			}
		}
	}
	return encodeImage(dst, format)
}
