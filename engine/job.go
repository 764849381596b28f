package engine

// Generation endpoints (design 0023): the asynchronous job of a video
// endpoint, polled and downloaded after its submit (the media counts of a
// response are body.go's). Not on the per-token path: a job sends a few
// requests a second at most.

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reprise-bench/reprise/engine/adapter"
	"github.com/reprise-bench/reprise/engine/record"
)

// jobStatusNames names the job states in messages.
var jobStatusNames = [...]string{"unknown", "queued", "in_progress", "completed", "failed"}

// job follows the job whose submit r recorded: it polls the job's status
// every Config.JobPollInterval until a poll says completed or failed (or
// Config.JobTimeout from the submit passes), then downloads its content
// when Config.JobDownload says so. Every poll and the download are sent
// like any request (the same X-Request-Id, the same --timeout each);
// their failures fail r with the poll's kind and message. r's end, E2E
// and latency from intended become the job's.
func (s *Sender) job(ctx context.Context, r *record.Request) {
	e := s.e
	jb, ok := s.inst.(adapter.Job)
	if !ok {
		s.fail(r, record.ErrAdapter, fmt.Sprintf("adapter %s has no job requests", e.info.Name))
		return
	}
	var saved []record.Event
	if e.cfg.Events {
		saved = slices.Clone(s.events) // the submit's events are the request's
		defer func() { s.events = append(s.events[:0], saved...) }()
	}
	id := bytes.Clone(s.fin.Job.ID)
	status := s.fin.Job.Status
	submitted := r.EndNS
	var started, done int64
	if status >= adapter.JobInProgress {
		started = submitted
	}
	if status == adapter.JobCompleted {
		done = submitted
	}
	end := submitted
	defer func() {
		r.EndNS, r.LastTokenNS = end, end
		r.E2ENS = end - r.SentNS
		if r.IntendedNS != 0 {
			r.LatencyFromIntendedNS = end - r.IntendedNS
		}
	}()
	var deadline int64
	if e.cfg.JobTimeout > 0 {
		deadline = r.SentNS + int64(e.cfg.JobTimeout)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var sub record.Request
	// send sends one follow-up request and folds what r sums; false when
	// it failed (r then says why).
	send := func(what string, fill func(*adapter.HTTPRequest) error) bool {
		p, err := s.follow(fill)
		if err != nil {
			end = e.clock.Now()
			s.fail(r, record.ErrAdapter, fmt.Sprintf("%s of job %s: %v", what, id, err))
			return false
		}
		sub = record.Request{RequestID: r.RequestID}
		s.do(ctx, p, &sub)
		r.BytesReceived += sub.BytesReceived
		r.BytesSent += sub.BytesSent
		r.Reads += sub.Reads
		r.AdapterNS += sub.AdapterNS
		end = sub.EndNS
		if !sub.OK() {
			r.StatusCode = sub.StatusCode
			s.fail(r, sub.ErrorKind, fmt.Sprintf("%s of job %s: %s", what, id, sub.ErrorMessage))
			return false
		}
		return true
	}
	for status != adapter.JobCompleted && status != adapter.JobFailed {
		now := e.clock.Now()
		if deadline != 0 && now >= deadline {
			end = now
			s.fail(r, record.ErrTimeout, fmt.Sprintf("job %s not done after %v (--job-timeout): %d polls, last status %s",
				id, e.cfg.JobTimeout, r.JobPolls, jobStatusNames[status]))
			return
		}
		wait := e.cfg.JobPollInterval
		if deadline != 0 && now+int64(wait) > deadline {
			wait = time.Duration(deadline - now)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			end = e.clock.Now()
			kind, msg := classify(ctx, context.Cause(ctx))
			s.fail(r, kind, fmt.Sprintf("job %s: %s", id, msg))
			return
		case <-timer.C:
		}
		r.JobPolls++
		if !send("status poll", func(out *adapter.HTTPRequest) error { return jb.PollRequest(id, out) }) {
			return
		}
		status = s.fin.Job.Status
		if started == 0 && status >= adapter.JobInProgress {
			started = sub.EndNS
		}
		if status == adapter.JobCompleted {
			done = sub.EndNS
		}
	}
	if status == adapter.JobFailed {
		msg := string(s.fin.ErrorMessage)
		if msg == "" {
			msg = "no reason given"
		}
		s.fail(r, record.ErrJobFailed, fmt.Sprintf("job %s failed: %s", id, msg))
		return
	}
	r.JobQueueNS, r.JobGenerationNS = started-submitted, done-started
	if !e.cfg.JobDownload {
		return
	}
	if !send("content download", func(out *adapter.HTTPRequest) error { return jb.ContentRequest(id, out) }) {
		return
	}
	r.JobDownloadNS = sub.EndNS - sub.SentNS
	r.MediaItems, r.MediaBytes = sub.MediaItems, sub.MediaBytes
	r.FirstMediaNS = sub.SentNS + sub.FirstMediaNS - r.SentNS
}

// follow renders a job's follow-up request with the sender's own adapter
// instance.
func (s *Sender) follow(fill func(*adapter.HTTPRequest) error) (*Prepared, error) {
	if s.jb == nil {
		s.jb = &Builder{e: s.e, inst: s.inst}
	}
	b := s.jb
	b.out.Reset()
	if err := fill(&b.out); err != nil {
		return nil, err
	}
	p := &Prepared{TraceInputTokens: -1, ExpectedCachedTokens: -1}
	var in adapter.BuildInput
	if err := b.render(&in, p); err != nil {
		return nil, err
	}
	return p, nil
}
