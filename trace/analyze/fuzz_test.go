package analyze

import (
	"math"
	"testing"
	"time"

	"github.com/reprise-bench/reprise/trace"
)

// rowsFromBytes turns fuzz input into a small trace: each row takes a gap,
// a length and a few ids from a tiny alphabet (so ids repeat, at varying
// positions: chained or not).
func rowsFromBytes(data []byte) []trace.Row {
	var rows []trace.Row
	var t time.Duration
	for len(data) >= 3 {
		gap, k, extra := data[0], int(data[1]%9), data[2]
		data = data[3:]
		t += time.Duration(gap%4) * time.Second
		var ids []uint64
		for j := 0; j < k && len(data) > 0; j++ {
			ids = append(ids, uint64(data[0]%13))
			data = data[1:]
		}
		in := int(extra%16) + 1
		if len(ids) > 0 {
			in = (len(ids)-1)*16 + int(extra%16) + 1
		}
		rows = append(rows, trace.Row{
			Index: int64(len(rows)), Offset: t, HasOffset: true, InputTokens: in, OutputTokens: int(extra % 5),
			BlockSize: 16, HashIDs: ids, ParentID: -1, RequestID: -1,
		})
	}
	return rows
}

// FuzzAnalyzer checks invariants that hold for any trace: ratios in [0, 1];
// an LRU never beats the infinite cache and a bigger LRU never loses to a
// smaller one (LRU's inclusion property); the analyzer's multi-capacity LRU
// agrees with PrefixCache; AIPerf agrees with its literal transcription.
func FuzzAnalyzer(f *testing.F) {
	f.Add([]byte{0, 3, 5, 1, 2, 3, 0, 3, 7, 1, 2, 4, 1, 2, 1, 1, 9})
	f.Add([]byte{1, 8, 15, 1, 2, 3, 4, 5, 6, 7, 8, 0, 8, 15, 8, 7, 6, 5, 4, 3, 2, 1})
	f.Add([]byte{3, 0, 0, 3, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows := rowsFromBytes(data)
		caps := []int64{16, 48, 0, 32, 160}
		rep := Rows(rows, Config{CacheSizes: caps})
		c := rep.Cache
		if c == nil {
			return
		}
		in := func(x float64) bool { return x >= 0 && x <= 1 }
		if !in(c.TokenHitRatio) || !in(c.BlockHitRatio) {
			t.Fatalf("ratios out of range: %+v", c)
		}
		byCap := map[int64]float64{}
		for i, p := range c.LRU {
			if p.TokenHitRatio > c.TokenHitRatio || p.BlockHitRatio > c.BlockHitRatio {
				t.Fatalf("LRU %d beats the infinite cache: %+v vs %v", caps[i], p, c.TokenHitRatio)
			}
			byCap[p.CapacityTokens] = p.TokenHitRatio
			pc := NewPrefixCache(16, caps[i])
			var hit, total int64
			for _, r := range rows {
				if len(r.HashIDs) > 0 {
					hit += int64(pc.Access(r.HashIDs, r.InputTokens))
					total += int64(r.InputTokens)
				}
			}
			if got := ratio(hit, total); got != p.TokenHitRatio {
				t.Fatalf("capacity %d: analyzer %v, PrefixCache %v", caps[i], p.TokenHitRatio, got)
			}
		}
		if !(byCap[0] <= byCap[16] && byCap[16] <= byCap[32] && byCap[32] <= byCap[48] && byCap[48] <= byCap[160]) {
			t.Fatalf("LRU hit ratio not monotone in capacity: %v", byCap)
		}
		want := aiperfOracle(rows, 16)
		got := rep.AIPerf
		if got.UniquePrefixes != want.UniquePrefixes || got.NumPrefixGroups != want.NumPrefixGroups ||
			got.PrefixReuseRatio != want.PrefixReuseRatio || math.Abs(got.CacheHitRate-want.CacheHitRate) > 1e-12 {
			t.Fatalf("AIPerf %+v, oracle %+v", got, want)
		}
	})
}

func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"3M", "0.5M", "4096", "1.5k", "2G", "", "-1", "1e3", "12.5", "M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseTokens(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseTokens(%q) = %d, negative", s, v)
		}
		// Round trip through the display form when it is exact.
		if back, err := ParseTokens(fmtTokens(v)); err == nil && back != v && fmtTokens(v) == fmtTokens(back) {
			t.Fatalf("%q → %d → %q → %d", s, v, fmtTokens(v), back)
		}
	})
}
