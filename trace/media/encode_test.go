package media

import "testing"

// TestGeneratorEncodesOnce: an image is encoded once per distinct seed,
// however often a request is built: 20 requests of 2 images, each built
// three times, make 40 images; with --image-reuse, 2 for the whole run.
func TestGeneratorEncodesOnce(t *testing.T) {
	for _, c := range []struct {
		reuse bool
		want  int64
	}{{false, 40}, {true, 2}} {
		g := NewGenerator(SyntheticConfig{Images: 2, ImageWidthMean: 16, ImageHeightMean: 8, ImageReuse: c.reuse}, 7)
		var dst []*Part
		for range 3 {
			for i := range uint64(20) {
				var err error
				if dst, err = g.Request(dst[:0], i); err != nil {
					t.Fatal(err)
				}
				if len(dst) != 2 {
					t.Fatalf("request %d: %d parts", i, len(dst))
				}
			}
		}
		if got := g.encodes.Load(); got != c.want {
			t.Errorf("reuse %v: %d encodes, want %d", c.reuse, got, c.want)
		}
	}
}

// TestGeneratorCachedAllocs: a cache hit allocates nothing (the send path
// copies the cached part; it never encodes).
func TestGeneratorCachedAllocs(t *testing.T) {
	g := NewGenerator(SyntheticConfig{Images: 1, ImageWidthMean: 64, ImageHeightMean: 64, ImageReuse: true}, 1)
	dst, err := g.Request(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(100, func() { dst, _ = g.Request(dst[:0], 5) })
	if n != 0 {
		t.Errorf("a cached request allocates %v times, want 0", n)
	}
	if g.encodes.Load() != 1 {
		t.Errorf("%d encodes, want 1", g.encodes.Load())
	}
}
