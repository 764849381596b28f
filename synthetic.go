package reprise

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/reprise-bench/reprise/replay"
	"github.com/reprise-bench/reprise/trace"
)

// shaped reports whether the synthetic load has sessions or shared
// prefixes, which make it rows generated before the run.
func (s *SyntheticLoad) shaped() bool {
	return s.Sessions > 0 || s.TurnsMean > 1 || s.SharedPrefix > 0 || s.UserContext > 0 || s.PrefixGroups > 1 || len(s.SeqDist) > 0 || s.Entries > 0
}

// maxPrefixBlocks bounds the hash ids of a synthetic row's shared prefixes.
const maxPrefixBlocks = 4096

// Hash id namespaces of synthetic rows: shared prefixes, user contexts,
// fresh blocks (ids are opaque; these only keep them apart).
const (
	idShared  = 1 << 60
	idContext = 2 << 60
	idFresh   = 3 << 60
)

// syntheticProblems checks the session and prefix fields of s (with or
// without a trace: with one, they must be unset).
func syntheticProblems(s *SyntheticLoad, withTrace bool, bad func(path, format string, args ...any)) {
	if withTrace {
		if s.shaped() || s.TurnsStdDev > 0 || s.TurnDelay > 0 || s.TurnDelayStdDev > 0 {
			bad("Synthetic.Sessions", "{Synthetic.Sessions}, the session turns and the shared prefixes describe a synthetic load; with a {Trace.Path} they come from the trace")
		}
		return
	}
	if s.Sessions < 0 {
		bad("Synthetic.Sessions", "{Synthetic.Sessions} %d: must not be negative", s.Sessions)
	}
	if s.TurnsMean < 0 || s.TurnsStdDev < 0 || math.IsNaN(s.TurnsMean) || s.TurnsMean > 1e6 {
		bad("Synthetic.TurnsMean", "{Synthetic.TurnsMean} %v ± {Synthetic.TurnsStdDev} %v: want turns ≥ 0 (0 = 1) and a standard deviation ≥ 0", s.TurnsMean, s.TurnsStdDev)
	}
	if s.TurnDelay < 0 || s.TurnDelayStdDev < 0 {
		bad("Synthetic.TurnDelay", "{Synthetic.TurnDelay} %v ± {Synthetic.TurnDelayStdDev} %v: must not be negative", s.TurnDelay, s.TurnDelayStdDev)
	}
	if s.SharedPrefix < 0 || s.UserContext < 0 || s.PrefixGroups < 0 {
		bad("Synthetic.SharedPrefix", "{Synthetic.SharedPrefix} %d, {Synthetic.UserContext} %d and {Synthetic.PrefixGroups} %d must not be negative", s.SharedPrefix, s.UserContext, s.PrefixGroups)
	}
	if s.Entries < 0 || s.Entries > 0 && (s.TurnsMean > 1 || s.TurnsStdDev > 0) {
		bad("Synthetic.Entries", "{Synthetic.Entries} %d: want a pool of at least 1 entry, of single-turn requests (no {Synthetic.TurnsMean} over 1)", s.Entries)
	}
	if s.PrefixGroups > 1 && s.SharedPrefix == 0 {
		bad("Synthetic.PrefixGroups", "{Synthetic.PrefixGroups} %d needs {Synthetic.SharedPrefix}: the length of each group's prefix", s.PrefixGroups)
	}
	if b := prefixBlock(s); b > 0 && (s.SharedPrefix+s.UserContext)/b > maxPrefixBlocks {
		bad("Synthetic.SharedPrefix", "{Synthetic.SharedPrefix} %d and {Synthetic.UserContext} %d have the greatest common divisor %d: their prefixes would take %d blocks of %d tokens (at most %d); give lengths with a larger common divisor (e.g. multiples of 16)",
			s.SharedPrefix, s.UserContext, b, (s.SharedPrefix+s.UserContext)/b, b, maxPrefixBlocks)
	}
}

// synthLength is a drawn synthetic length v in whole tokens, at least 1
// and at most limit (a normal draw's tail, or a huge mean, never makes a
// prompt over the input cap or a max_tokens over int32).
func synthLength(v float64, limit int) int {
	if !(v < float64(limit)) {
		return limit
	}
	return max(1, int(math.Round(v)))
}

// prefixBlock is the block size of a synthetic load's hash ids: the
// greatest common divisor of its prefix lengths, so that every prefix is
// whole blocks; 0 without prefixes.
func prefixBlock(s *SyntheticLoad) int {
	a, b := s.SharedPrefix, s.UserContext
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// syntheticRows generates the rows of a shaped synthetic load: Sessions
// conversations (else enough for rc's request count, 10 without one, or
// 100 when only a duration bounds the run), each of TurnsMean ± TurnsStdDev
// turns. A first turn is the group's shared prefix, the session's context,
// then ISL ± ISLStdDev fresh tokens, as hash ids of prefixBlock tokens, so
// prompt synthesis shares exactly the prefixes and knows the expected
// cached tokens of every request; a later turn is fresh tokens only and
// grows the session's history. Equal seeds give equal rows.
func syntheticRows(s *SyntheticLoad, rc *replay.Config, maxInput int) []trace.Row {
	rng := rand.New(rand.NewPCG(rc.Seed, 0x73796e7468)) // "synth"
	pick := rand.New(rand.NewPCG(rc.Seed, 0x706f6f6c))  // "pool": PrefixRandom's own stream
	draw := func(mean, std float64) int {
		v := mean
		if std > 0 {
			v = mean + std*rng.NormFloat64()
		}
		return synthLength(v, math.MaxInt32)
	}
	want := syntheticGoal(s, rc)
	B := prefixBlock(s)
	groups := max(s.PrefixGroups, 1)
	turnsMean := max(s.TurnsMean, 1)
	var rows []trace.Row
	fresh := uint64(idFresh)
	for n := 0; ; n++ {
		switch {
		case s.Sessions > 0 && n >= s.Sessions:
			return rows
		case want > 0 && len(rows) >= want:
			return rows
		case want < 0 && n >= -want:
			return rows
		}
		turns := draw(turnsMean, s.TurnsStdDev)
		id := ""
		if turns > 1 {
			id = "s" + strconv.Itoa(n)
		}
		for k := range turns {
			// A first turn's prefixes and ISL are within the cap (validate);
			// a draw is clamped to the room left.
			room := maxInput
			if k == 0 {
				room = max(1, maxInput-s.SharedPrefix-s.UserContext)
			}
			var isl, osl int
			if len(s.SeqDist) > 0 {
				isl, osl = seqDistLengths(s.SeqDist, rng, room)
			} else {
				isl = min(draw(s.ISL, s.ISLStdDev), room)
				if s.OSL > 0 {
					osl = draw(s.OSL, s.OSLStdDev)
				} // else no output length: the server decides (validate allowed it)
			}
			row := trace.Row{Index: int64(len(rows)), Line: int64(len(rows)) + 1, InputTokens: isl,
				OutputTokens: osl, SessionID: id, Turn: k, ParentID: -1, RequestID: -1}
			if k > 0 && (s.TurnDelay > 0 || s.TurnDelayStdDev > 0) {
				d := float64(s.TurnDelay)
				if s.TurnDelayStdDev > 0 {
					d += float64(s.TurnDelayStdDev) * rng.NormFloat64()
				}
				row.Delay, row.HasDelay = time.Duration(max(d, 0)), true
			}
			if B > 0 {
				row.BlockSize = B
				var ids []uint64
				if k == 0 {
					g := uint64(n % groups)
					if s.PrefixRandom {
						g = uint64(pick.IntN(groups))
					}
					for b := range s.SharedPrefix / B {
						ids = append(ids, idShared+g<<24+uint64(b))
					}
					for b := range s.UserContext / B {
						ids = append(ids, idContext+uint64(n)<<24+uint64(b))
					}
					row.InputTokens += s.SharedPrefix + s.UserContext
				}
				for range (isl + B - 1) / B {
					ids = append(ids, fresh)
					fresh++
				}
				row.HashIDs = ids
			}
			rows = append(rows, row)
		}
	}
}

// syntheticGoal is when syntheticRows stops, Sessions aside (0 when it
// is given): at the rows of a request count (with warmup), at 100
// sessions for a timed run (negative: sessions), or at AIPerf's 10
// requests.
func syntheticGoal(s *SyntheticLoad, rc *replay.Config) int {
	switch {
	case s.Sessions > 0:
		return 0
	case rc.RequestCount > 0:
		return rc.RequestCount + rc.WarmupRequests
	case rc.Duration > 0:
		return -100
	default:
		return 10 + rc.WarmupRequests
	}
}

// idPool is the hash id namespace of pool entries without prefixes.
const idPool = 4 << 60

// poolRows returns the rows of a synthetic load with a pool
// (SyntheticLoad.Entries): the pool's entries are generated as the first
// Entries rows would be, each given a hash id of its own when it has
// none (one block of its whole length) so that every repeat builds the
// same prompt, then the run's rows are drawn from the pool in the
// sampling order s.
func poolRows(sl *SyntheticLoad, rc *replay.Config, maxInput int, s trace.Sampling) []trace.Row {
	// The run's count of rows: its loads are single-turn (validate), so
	// one row per session.
	n := syntheticGoal(sl, rc)
	if sl.Sessions > 0 {
		n = sl.Sessions
	}
	n = max(n, -n)
	pc := *rc
	ps := *sl
	ps.Entries, ps.Sessions, pc.RequestCount, pc.WarmupRequests, pc.Duration = 0, 0, sl.Entries, 0, 0
	pool := syntheticRows(&ps, &pc, maxInput)
	for k := range pool {
		if r := &pool[k]; len(r.HashIDs) == 0 {
			r.HashIDs, r.BlockSize = []uint64{idPool + uint64(k)}, r.InputTokens
		}
	}
	var out []trace.Row
	if s == trace.SampleSequential || s == "" {
		out = make([]trace.Row, n)
		for i := range out {
			out[i] = pool[i%len(pool)]
		}
	} else {
		out = trace.Sample(pool, s, rc.Seed, n)
	}
	for i := range out {
		out[i].Index, out[i].Line = int64(i), int64(i)+1
	}
	return out
}

// shapedRows returns the rows of a shaped synthetic load: with a pool
// (Entries), drawn from it in the sampling order; else syntheticRows.
func shapedRows(sl *SyntheticLoad, rc *replay.Config, maxInput int, sampling string) []trace.Row {
	if sl.Entries > 0 {
		sm, _ := trace.ParseSampling(sampling)
		return poolRows(sl, rc, maxInput, sm)
	}
	return syntheticRows(sl, rc, maxInput)
}
