package reprise

import (
	"context"
	"log/slog"
	"time"

	"github.com/reprise-bench/reprise/engine"
	"github.com/reprise-bench/reprise/engine/summary"
	"github.com/reprise-bench/reprise/replay"
)

// NetworkLatencyOptions subtract the network round trip between reprise
// and the server from the latencies that start at the send (TTFT, TTFO,
// request latency): the summary reports them again as
// network_adjusted_<tag>, and the round trip as network_rtt (AIPerf's
// network latency calibration). The zero value adjusts nothing.
type NetworkLatencyOptions struct {
	// Mean is a round trip known beforehand (--network-latency-mean).
	Mean time.Duration
	// Probe measures it instead, exclusive with Mean: a TCP handshake to
	// the server every ProbeInterval (0: engine.DefaultRTTProbeInterval)
	// during the measured run, at least engine.MinRTTSamples; their mean
	// is subtracted (--network-latency-automatic).
	Probe         bool
	ProbeInterval time.Duration
}

// networkProblems reports the problems of o.NetworkLatency.
func networkProblems(o *Options, bad func(path, format string, args ...any)) {
	n := &o.NetworkLatency
	if n.Mean < 0 {
		bad("NetworkLatency.Mean", "{NetworkLatency.Mean} %v: must not be negative", n.Mean)
	}
	if n.Mean > 0 && n.Probe {
		bad("NetworkLatency.Probe", "{NetworkLatency.Probe} and {NetworkLatency.Mean} are exclusive: measure the round trip or give it")
	}
	if n.ProbeInterval < 0 || n.ProbeInterval > 0 && !n.Probe {
		bad("NetworkLatency.ProbeInterval", "{NetworkLatency.ProbeInterval} %v: want a positive interval, with {NetworkLatency.Probe}", n.ProbeInterval)
	}
}

// givenRTT is the summary's network round trip of a given mean; nil for
// none (or a probed one, known at the end of the run).
func givenRTT(n NetworkLatencyOptions) *summary.NetworkRTT {
	if n.Mean <= 0 {
		return nil
	}
	return &summary.NetworkRTT{Source: "mean", MeanNS: int64(n.Mean)}
}

// rttTopUp bounds the probes a short run makes at its end to reach
// engine.MinRTTSamples (AIPerf's 3 s).
const rttTopUp = 3 * time.Second

// rttProbe is the measured run's round-trip probe (runConfig.RTTProbe);
// the zero value probes nothing.
type rttProbe struct{ p *engine.RTTProbe }

// startRTTProbe starts probing the server of ec every interval when
// interval > 0. A probe that cannot start is logged: the run goes on
// without adjusted metrics.
func startRTTProbe(ctx context.Context, ec *engine.Config, interval time.Duration, log *slog.Logger) rttProbe {
	if interval <= 0 {
		return rttProbe{}
	}
	p, err := engine.StartRTTProbe(ctx, ec.BaseURL, interval, ec.Dial)
	if err != nil {
		log.Warn("no network-adjusted metrics", slog.Any("err", err))
		return rttProbe{}
	}
	return rttProbe{p: p}
}

// stop ends the probe and returns the summary's round trip; nil without
// a probe.
func (r rttProbe) stop(ctx context.Context, log *slog.Logger) *summary.NetworkRTT {
	if r.p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, rttTopUp)
	defer cancel()
	samples, failed := r.p.Stop(ctx)
	n := &summary.NetworkRTT{Source: "probe", FailedProbes: failed, SamplesNS: make([]int64, len(samples))}
	for i, s := range samples {
		n.SamplesNS[i] = int64(s)
	}
	n.MeanNS = summary.MeanRTT(n.SamplesNS)
	if len(samples) == 0 {
		log.Warn("network latency probe: no handshake succeeded; latencies are not adjusted", slog.Int("failed", failed))
	}
	return n
}

// runOnClock runs rn's plan on clock until stopCtx ends, probing the
// network round trip meanwhile when the run asks for it
// (runConfig.RTTProbe): the summary's RunInfo.NetworkRTT.
func (rn *runner) runOnClock(ctx, stopCtx context.Context, clock *replay.Clock) (replay.Stats, error) {
	cfg := rn.cfg
	probe := startRTTProbe(stopCtx, &cfg.Engine, cfg.RTTProbe, rn.log)
	stats, err := rn.plan.RunOnClock(stopCtx, rn, clock)
	if rtt := probe.stop(context.WithoutCancel(ctx), rn.log); rtt != nil {
		cfg.Info.NetworkRTT = rtt
	}
	return stats, err
}
