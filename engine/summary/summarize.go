// From records to a Summary: NewAccumulator, Add, Summary and
// Summarize, and the goodput judgement of one request.

package summary

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/reprise-bench/reprise/engine/record"
)

// NewAccumulator returns an empty accumulator.
func NewAccumulator(opts Options) *Accumulator {
	a := &Accumulator{opts: opts, vals: make([]series, len(metrics)), exact: ExactValues, errIdx: map[errKey]int{}}
	if a.opts.LateThreshold == 0 {
		a.opts.LateThreshold = time.Millisecond
	}
	a.s.ErrorsByKind = map[record.ErrorKind]int{}
	for _, slo := range opts.Goodput {
		i, ok := metricByTag(slo.Tag)
		if !ok {
			i = -1 // accuracy
		}
		a.good = append(a.good, i)
	}
	if len(opts.Targets) > 1 {
		one := opts
		one.Targets = nil
		for range opts.Targets {
			a.targets = append(a.targets, NewAccumulator(one))
		}
	}
	return a
}

// Add adds one record. Warmup records are only counted.
func (a *Accumulator) Add(r *record.Request) {
	if t := int(r.Target); t >= 0 && t < len(a.targets) {
		a.targets[t].Add(r)
	}
	s := &a.s
	s.Sent.add(r)
	if r.Phase == record.PhaseWarmup {
		s.WarmupCount++
		return
	}
	o := &a.opts
	if r.Task > 0 && !r.PlannedCancel() {
		a.addTask(r)
	}
	if r.Graded && !r.PlannedCancel() {
		a.addAccuracy(r)
	}
	if r.IntendedNS != 0 {
		if a.nInt == 0 || r.IntendedNS < a.minInt {
			a.minInt = r.IntendedNS
		}
		a.maxInt = max(a.maxInt, r.IntendedNS)
		a.nInt++
		if r.LatenessNS > int64(o.LateThreshold) {
			s.LateCount++
		}
	}
	if r.SentNS != 0 && r.ErrorKind != record.ErrNotDelivered {
		if a.nSent == 0 || r.SentNS < a.minSent {
			a.minSent = r.SentNS
		}
		a.maxSent = max(a.maxSent, r.SentNS)
		a.nSent++
		// The span ends at the last response of any outcome: a failed
		// request ends at its error (EndNS), an ok one at its last token.
		end := r.EndNS
		if r.OK() {
			end = r.SentNS + r.E2ENS
		}
		a.maxEnd = max(a.maxEnd, end)
	}
	s.Retries += int64(r.Retries)
	if r.ConnReused {
		s.ConnReused++
	}
	eachValue(r, o, func(i int, v float64) { a.vals[i].add(v, a.exact) })
	if r.PlannedCancel() {
		s.CancelledRequestCount++
		return
	}
	if !r.OK() {
		s.ErrorRequestCount++
		s.ErrorsByKind[r.ErrorKind]++
		k := errKey{r.ErrorKind, r.StatusCode}
		if j, seen := a.errIdx[k]; seen {
			s.Errors[j].Count++
		} else if len(s.Errors) >= MaxErrorEntries {
			s.ErrorsOmitted++
		} else {
			a.errIdx[k] = len(s.Errors)
			s.Errors = append(s.Errors, ErrorCount{Kind: r.ErrorKind, Status: r.StatusCode, Message: r.ErrorMessage, Count: 1})
		}
		return
	}
	s.RequestCount++
	s.TotalISL += int64(r.InputTokens)
	s.TotalInputImages += int64(r.InputImages)
	s.TotalInputAudio += time.Duration(r.InputAudioNS)
	n := osl(r, o)
	s.TotalOSL += n
	src := r.OutputTokensSource
	if src == record.TokensUnknown || int(src) >= len(s.OSLSources) {
		src = record.TokensClient
		if o.UseServerTokenCount && r.ServerCompletionTokens >= 0 {
			src = record.TokensServer
		}
	}
	s.OSLSources[src]++
	s.TotalReasoning += int64(r.ReasoningTokens)
	s.TotalMediaItems += int64(r.MediaItems)
	s.TotalMediaBytes += r.MediaBytes
	s.TotalAudio += time.Duration(r.AudioNS)
	if r.ServerCachedTokens >= 0 && r.ExpectedCachedTokens >= 0 {
		s.ServerCachedTokens += int64(r.ServerCachedTokens)
		s.ExpectedCachedTokens += int64(r.ExpectedCachedTokens)
		if r.ExpectedCachedTokens == 0 && r.ServerPromptTokens > 0 {
			s.Fresh.Requests++
			s.Fresh.PromptTokens += int64(r.ServerPromptTokens)
			s.Fresh.CachedTokens += int64(r.ServerCachedTokens)
		}
	}
	if len(a.good) > 0 && a.isGood(r) {
		s.GoodRequestCount++
	}
}

func (a *Accumulator) isGood(r *record.Request) bool {
	for j, i := range a.good {
		if i < 0 {
			if r.Graded && !r.AccuracyCorrect {
				return false
			}
			continue
		}
		m := &metrics[i]
		v, has := m.get(r, &a.opts)
		if !has || (m.stream && !a.opts.Streaming) {
			return false
		}
		lim := a.opts.Goodput[j].Value
		if m.larger && v < lim || !m.larger && v > lim {
			return false
		}
	}
	return true
}

// Good reports whether r is a good request under o's goodput SLOs, as the
// summary counts it in good_request_count: a successful measured request
// meeting every SLO. It is false when o has no SLOs or r is a warmup
// request.
func Good(r *record.Request, o Options) bool {
	if len(o.Goodput) == 0 || r.Phase == record.PhaseWarmup || !r.OK() {
		return false
	}
	a := Accumulator{opts: o}
	for _, slo := range o.Goodput {
		i, ok := metricByTag(slo.Tag)
		if !ok {
			i = -1 // accuracy
		}
		a.good = append(a.good, i)
	}
	return a.isGood(r)
}

// Summary computes the summary of everything added so far. It may be
// called more than once.
func (a *Accumulator) Summary(info RunInfo) *Summary {
	s := a.s // copy
	s.Run = info
	s.Options = a.opts
	s.ErrorsByKind = maps(a.s.ErrorsByKind)
	s.Errors = slices.Clone(a.s.Errors)
	sort.SliceStable(s.Errors, func(i, j int) bool { return s.Errors[i].Count > s.Errors[j].Count })
	s.Metrics = map[string]*Stats{}
	for i := range metrics {
		if a.vals[i].count() == 0 {
			continue
		}
		st := a.vals[i].stats()
		st.Unit = metrics[i].unit
		s.Metrics[metrics[i].tag] = &st
	}
	s.adjustForNetwork()
	s.WindowStartNS, s.WindowEndNS = a.minSent, a.maxEnd
	if a.maxEnd > a.minSent {
		s.BenchmarkDuration = time.Duration(a.maxEnd - a.minSent)
	}
	if s.BenchmarkDuration > 0 && s.RequestCount > 0 {
		sec := s.BenchmarkDuration.Seconds()
		s.RequestThroughput = float64(s.RequestCount) / sec
		s.OutputTokenThroughput = float64(s.TotalOSL) / sec
		s.TotalTokenThroughput = float64(s.TotalISL+s.TotalOSL) / sec
		s.InputImageThroughput = float64(s.TotalInputImages) / sec
		s.InputAudioThroughput = s.TotalInputAudio.Seconds() / sec
		s.Goodput = float64(s.GoodRequestCount) / sec
		s.MediaThroughput = float64(s.TotalMediaItems) / sec
		s.AudioThroughput = s.TotalAudio.Seconds() / sec
		if info.InputsPerRequest > 0 {
			s.InputThroughput = float64(s.RequestCount*info.InputsPerRequest) / sec
			s.InputTokenThroughput = float64(s.TotalISL) / sec
		}
	}
	if n := s.RequestCount + s.ErrorRequestCount; n > 0 && len(a.good) > 0 {
		s.GoodRequestFraction = float64(s.GoodRequestCount) / float64(n)
	}
	if a.nInt > 1 && a.maxInt > a.minInt {
		s.IntendedRate = float64(a.nInt-1) / (float64(a.maxInt-a.minInt) / 1e9)
	}
	if a.nSent > 1 && a.maxSent > a.minSent {
		s.AchievedRate = float64(a.nSent-1) / (float64(a.maxSent-a.minSent) / 1e9)
	}
	s.Tasks = a.taskSummary()
	s.Accuracy = a.accuracySummary()
	s.Load = s.load(a.nSent, a.minSent, a.maxSent)
	s.CacheFidelity = math.NaN()
	if s.ExpectedCachedTokens > 0 {
		s.CacheFidelity = float64(s.ServerCachedTokens) / float64(s.ExpectedCachedTokens)
	}
	if len(a.targets) > 0 {
		s.Targets = make([]*Summary, len(a.targets))
		for t, ta := range a.targets {
			ti := info
			ti.URL, ti.Model = a.opts.Targets[t].URL, a.opts.Targets[t].Model
			s.Targets[t] = ta.Summary(ti)
		}
	}
	return &s
}

func maps(m map[record.ErrorKind]int) map[record.ErrorKind]int {
	out := make(map[record.ErrorKind]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Summarize computes the summary of reqs.
func Summarize(reqs []record.Request, info RunInfo, opts Options) *Summary {
	a := NewAccumulator(opts)
	for i := range reqs {
		a.Add(&reqs[i])
	}
	return a.Summary(info)
}
