package analyze

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/reprise-bench/reprise/internal/testfiles"
	"github.com/reprise-bench/reprise/trace"
)

// analyzeBytes is the hot loop of analyze-trace on an in-memory file:
// decode every row and feed both the time-order Analyzer and the
// file-order AIPerf statistics. It returns the rows read.
func analyzeBytes(data []byte, a *Analyzer, p *AIPerf) (int64, error) {
	rd, err := trace.NewReader("bench.jsonl", bytes.NewReader(data), trace.Options{})
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	var row trace.Row
	var n int64
	for {
		err := rd.Next(&row)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		switch {
		case a != nil && p != nil:
			a.Add(&row)
			p.addInterned(&row, a)
		case a != nil:
			a.Add(&row)
		case p != nil:
			p.Add(&row)
		}
		n++
	}
}

// BenchmarkAnalyzeMooncake measures analyze-trace's hot loop on the Mooncake
// conversation trace (12,031 rows, 24 ids per row), in rows/s, split into
// its parts: "full" = decode + time-order stats + AIPerf stats, "decode" =
// the trace reader alone, "stats" = Analyzer.Add alone on decoded rows,
// "stats-no-lru" = the same without LRU capacities, "aiperf" = AIPerf.Add
// alone. The default 4 LRU capacities are on. The decoded rows are loaded
// only for the parts that need them: held during "full", they would be
// scanned by every garbage collection, which analyze-trace does not do.
func BenchmarkAnalyzeMooncake(b *testing.B) {
	data := testfiles.TraceBytes(b, "mooncake/conversation_trace.jsonl")
	var rows []trace.Row
	loadRows := func(b *testing.B) {
		if rows == nil {
			rows = loadMooncake(b, testfiles.Trace(b, "mooncake/conversation_trace.jsonl"))
		}
	}
	var cpu0 time.Duration
	perRows := func(b *testing.B, n int) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		if c := cpuTime() - cpu0; c > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/c.Seconds(), "rows/cpu-s")
		}
	}
	b.Run("full", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var n int64
		cpu0 = cpuTime()
		for b.Loop() {
			var err error
			n, err = analyzeBytes(data, New(Config{}), NewAIPerf(512))
			if err != nil {
				b.Fatal(err)
			}
		}
		perRows(b, int(n))
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var n int64
		cpu0 = cpuTime()
		for b.Loop() {
			var err error
			n, err = analyzeBytes(data, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
		}
		perRows(b, int(n))
	})
	b.Run("stats", func(b *testing.B) {
		loadRows(b)
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			a := New(Config{})
			for i := range rows {
				a.Add(&rows[i])
			}
		}
		perRows(b, len(rows))
	})
	b.Run("stats-no-lru", func(b *testing.B) {
		loadRows(b)
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			a := New(Config{CacheSizes: []int64{}})
			for i := range rows {
				a.Add(&rows[i])
			}
		}
		perRows(b, len(rows))
	})
	b.Run("aiperf", func(b *testing.B) {
		loadRows(b)
		b.ReportAllocs()
		cpu0 = cpuTime()
		for b.Loop() {
			p := NewAIPerf(512)
			for i := range rows {
				p.Add(&rows[i])
			}
		}
		perRows(b, len(rows))
	})
}

// TestBenchmarkAnalyzeMooncake checks that the benchmarked loop computes the
// golden numbers.
func TestBenchmarkAnalyzeMooncake(t *testing.T) {
	data := testfiles.TraceBytes(t, "mooncake/conversation_trace.jsonl")
	a, p := New(Config{}), NewAIPerf(512)
	n, err := analyzeBytes(data, a, p)
	if err != nil {
		t.Fatal(err)
	}
	rep, ap := a.Report(), p.Report()
	check(t, []want{
		{"rows", float64(n), 12031, 0},
		{"token hit", rep.Cache.TokenHitRatio, 0.3736, ratioTol},
		{"LRU 3M token hit", rep.Cache.LRU[1].TokenHitRatio, 0.1382, ratioTol},
		{"cache_hit_rate", ap.CacheHitRate, 0.3843, ratioTol},
		{"unique_prefixes", float64(ap.UniquePrefixes), 182790, 0},
	})
}

// synthGen generates an endless chained-id trace over a FIXED set of ids:
// docs documents of depth blocks each; a row picks a document and a
// prefix of it, uniformly. Arrivals are Poisson-like with millisecond timestamps.
type synthGen struct {
	rng   *rand.Rand
	docs  int
	depth int
	t     time.Duration
	ids   []uint64
	row   trace.Row
}

func newSynthGen(docs, depth int) *synthGen {
	return &synthGen{rng: rand.New(rand.NewPCG(11, 12)), docs: docs, depth: depth, ids: make([]uint64, depth)}
}

func (g *synthGen) next() *trace.Row {
	g.t += time.Duration(g.rng.ExpFloat64()*2) * time.Millisecond
	d := g.rng.IntN(g.docs)
	k := 1 + g.rng.IntN(g.depth)
	for j := range k {
		g.ids[j] = uint64(d*g.depth+j)*0x9e3779b97f4a7c15 + 1 // opaque, not dense
	}
	g.row = trace.Row{
		Offset: g.t, HasOffset: true, InputTokens: k*512 - g.rng.IntN(512), OutputTokens: 1 + g.rng.IntN(1000),
		BlockSize: 512, HashIDs: g.ids[:k], ParentID: -1, RequestID: -1,
	}
	return &g.row
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// BenchmarkMemory10M feeds 10M synthetic rows over a fixed set of 160,000
// block ids (20,000 documents × 8 blocks, 4.5 ids per row) to an Analyzer
// and an AIPerf, and reports the live heap after 1M and after 10M rows, and
// rows per CPU second (generation included). Run it alone:
//
//	go test -run='^$' -bench=Memory10M -benchtime=1x ./trace/analyze
func BenchmarkMemory10M(b *testing.B) {
	for b.Loop() {
		base := heapInUse()
		cpu0 := cpuTime()
		g := newSynthGen(20_000, 8)
		a, p := New(Config{}), NewAIPerf(512)
		var at1M uint64
		for i := range 10_000_000 {
			r := g.next()
			a.Add(r)
			p.Add(r)
			if i+1 == 1_000_000 {
				at1M = heapInUse() - base
			}
		}
		cpu := cpuTime() - cpu0
		at10M := heapInUse() - base
		if cpu > 0 {
			b.ReportMetric(10e6/cpu.Seconds(), "rows/cpu-s")
		}
		b.ReportMetric(float64(at1M)/(1<<20), "MiB@1M")
		b.ReportMetric(float64(at10M)/(1<<20), "MiB@10M")
		b.ReportMetric(float64(a.blocks.len()), "blocks")
		runtime.KeepAlive(a)
		runtime.KeepAlive(p)
	}
}

// BenchmarkAnalyzeSynthetic runs the Analyzer and AIPerf on 200k generated
// rows with opaque (hashed, map-interned) ids: the cost on traces whose ids
// are not small integers.
func BenchmarkAnalyzeSynthetic(b *testing.B) {
	g := newSynthGen(20_000, 8)
	rows := make([]trace.Row, 200_000)
	for i := range rows {
		rows[i] = g.next().Clone()
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		a, p := New(Config{}), NewAIPerf(512)
		for i := range rows {
			a.Add(&rows[i])
			p.addInterned(&rows[i], a)
		}
	}
	if c := cpuTime() - cpu0; c > 0 {
		b.ReportMetric(float64(len(rows))*float64(b.N)/c.Seconds(), "rows/cpu-s")
	}
}

// TestBenchmarkAnalyzeSynthetic checks the benchmarked path: AIPerf fed
// through the Analyzer's id numbering equals AIPerf interning on its own,
// and the generator's fixed id set bounds the distinct blocks.
func TestBenchmarkAnalyzeSynthetic(t *testing.T) {
	g := newSynthGen(500, 8)
	rows := make([]trace.Row, 40_000)
	for i := range rows {
		rows[i] = g.next().Clone()
	}
	a, shared, alone := New(Config{}), NewAIPerf(512), NewAIPerf(512)
	for i := range rows {
		a.Add(&rows[i])
		shared.addInterned(&rows[i], a)
		alone.Add(&rows[i])
	}
	if d := gocmp.Diff(alone.Report(), shared.Report()); d != "" {
		t.Errorf("shared numbering changes AIPerf (-alone +shared):\n%s", d)
	}
	if n := a.Report().Cache.DistinctBlocks; n != 4000 {
		t.Errorf("distinct blocks %d, want 4,000", n)
	}
}
