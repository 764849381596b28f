package reprise

import (
	"context"
	"fmt"
	"hash/maphash"
	"log/slog"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// PrimeRequestIDBase is the first request_id of the priming requests
// ([Options.PrimePrefixes]): the measured run's ids count from 0, so the
// two never meet.
const PrimeRequestIDBase = 1 << 62

// primeRows returns one row per distinct shared prefix of rows: the
// leading hash ids that two or more rows have in common, each prefix that
// is no other's beginning (priming a prefix primes its own beginnings),
// as a request of those full blocks and one output token, in the order
// of the first row that has it. A row whose ids the others share no block
// of needs no priming. Their indexes follow the largest of rows. The rows
// own their HashIDs.
func primeRows(rows []trace.Row) []trace.Row {
	// A prefix is named by the hash of its chain of ids.
	seed := maphash.MakeSeed()
	key := func(parent uint64, id uint64) uint64 {
		var h maphash.Hash
		h.SetSeed(seed)
		var b [16]byte
		for i := range 8 {
			b[i], b[8+i] = byte(parent>>(8*i)), byte(id>>(8*i))
		}
		_, _ = h.Write(b[:])
		return h.Sum64()
	}
	count := map[uint64]int{}
	maxIndex := int64(-1)
	for i := range rows {
		r := &rows[i]
		maxIndex = max(maxIndex, r.Index)
		if r.BlockSize <= 0 || len(r.Raw) > 0 {
			continue
		}
		k := uint64(0)
		for _, id := range r.HashIDs {
			k = key(k, id)
			count[k]++
		}
	}
	// Each row's longest shared prefix of full blocks.
	type prefix struct {
		row  int
		n    int
		keys []uint64
	}
	var found []prefix
	byKey := map[uint64]int{}  // last key of a found prefix → its index
	inner := map[uint64]bool{} // keys that begin a longer found prefix
	for i := range rows {
		r := &rows[i]
		if r.BlockSize <= 0 || len(r.Raw) > 0 {
			continue
		}
		var keys []uint64
		k := uint64(0)
		for j, id := range r.HashIDs {
			k = key(k, id)
			if count[k] < 2 || (j+1)*r.BlockSize > r.InputTokens {
				break
			}
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			continue
		}
		last := keys[len(keys)-1]
		if _, dup := byKey[last]; dup {
			continue
		}
		byKey[last] = len(found)
		found = append(found, prefix{row: i, n: len(keys), keys: keys})
		for _, ik := range keys[:len(keys)-1] {
			inner[ik] = true
		}
	}
	var out []trace.Row
	for _, p := range found {
		if inner[p.keys[p.n-1]] {
			continue
		}
		src := &rows[p.row]
		maxIndex++
		out = append(out, trace.Row{Index: maxIndex, Line: src.Line, InputTokens: p.n * src.BlockSize, OutputTokens: 1,
			ParentID: -1, RequestID: -1, BlockSize: src.BlockSize, HashIDs: append([]uint64(nil), src.HashIDs[:p.n]...)})
	}
	return out
}

// primePlan is the schedule of the priming requests: all of them, as
// warmup, closed loop at the run's concurrency (at most one per prefix).
func primePlan(rows []trace.Row, c replay.Config, senders int) (*replay.Plan, error) {
	pc := replay.NewConfig()
	pc.Mode = replay.ModeConcurrency
	pc.Concurrency = max(1, min(len(rows), senders))
	pc.WarmupRequests = len(rows)
	pc.Seed, pc.Grace = c.Seed, c.Grace
	return replay.NewPlan(pc, rows)
}

// primeSink writes the priming requests' records with the run's, as
// warmup, their ids from PrimeRequestIDBase, and keeps them for the
// run's summary. It leaves the run's sink open.
type primeSink struct {
	sink recordSink
	recs []record.Request
}

func (p *primeSink) WriteRequests(batch []record.Request) error {
	for i := range batch {
		batch[i].RequestID += PrimeRequestIDBase
		batch[i].Phase = record.PhaseWarmup
		p.recs = append(p.recs, batch[i])
	}
	return p.sink.WriteRequests(batch)
}

func (p *primeSink) WriteEvents(batch []record.Event) error {
	for i := range batch {
		batch[i].RequestID += PrimeRequestIDBase
	}
	return p.sink.WriteEvents(batch)
}

func (p *primeSink) Close() error { return nil }

// prime sends the priming requests of rp on the run's engine and sink and
// waits for every one; it returns their records for the run's summary.
// A failed priming request is a record like any other; an interrupted
// priming ends the run.
func prime(ctx context.Context, rcfg runConfig, rp *replayPlan, log *slog.Logger) ([]record.Request, error) {
	plan, err := primePlan(rp.prime, rp.plan.Config(), rp.plan.Senders())
	if err != nil {
		return nil, fmt.Errorf("prime prefixes: %w", err)
	}
	ps := &primeSink{sink: rcfg.Sink}
	pc := rcfg
	pc.Plan, pc.Sink, pc.Progress, pc.OnEnd, pc.Inputs, pc.Before = plan, ps, nil, nil, nil, nil
	pc.FailedRequestThreshold = nil // the run's own measured requests are judged, not the priming
	pc.Accuracy = nil               // priming requests carry no items
	pc.RTTProbe = 0                 // the measured run probes the round trip
	start := time.Now()
	res, err := runEngine(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("prime prefixes: %w", err)
	}
	if res.Interrupted {
		return nil, fmt.Errorf("prime prefixes: %w", context.Canceled)
	}
	failed := 0
	for i := range ps.recs {
		if !ps.recs[i].OK() {
			failed++
		}
	}
	log.Info("primed the trace's shared prefixes", slog.Int("requests", len(ps.recs)), slog.Int("failed", failed),
		slog.Duration("took", time.Since(start)))
	return ps.recs, nil
}
