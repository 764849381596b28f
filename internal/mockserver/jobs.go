// The store of video jobs (media.go serves them): a job's state is a function of time.

package mockserver

import "sync"

// job is one video job. Its state is a function of time.
type job struct {
	id                    string
	model                 string
	seconds               int
	width, height, frames int
	queued, started, done int64 // mono
	failed                bool
}

// jobs is the video job table. Safe for concurrent use.
type jobs struct {
	mu sync.Mutex
	m  map[string]*job
}

func (j *jobs) get(id string) *job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.m[id]
}

func (j *jobs) put(jb *job) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.m == nil {
		j.m = map[string]*job{}
	}
	j.m[jb.id] = jb
}

// status is the job's state at mono time t.
func (jb *job) status(t int64) string {
	switch {
	case t < jb.started:
		return "queued"
	case t < jb.done:
		return "in_progress"
	case jb.failed:
		return "failed"
	}
	return "completed"
}
