package summary

import (
	"sort"

	"github.com/reprise-bench/reprise/engine/record"
	"github.com/reprise-bench/reprise/internal/accuracy"
)

func (s *AccuracyStat) add(r *record.Request) {
	s.Graded++
	switch {
	case !r.OK():
		s.Failed++
	case r.AccuracyCorrect:
		s.Correct++
	case r.AccuracyAnswer == "":
		s.Unanswered++
	}
}

func (s *AccuracyStat) finish() {
	if s.Graded > 0 {
		s.Accuracy = float64(s.Correct) / float64(s.Graded)
	}
	s.Low, s.High = accuracy.Wilson(s.Correct, s.Graded, accuracy.Z95)
}

// addAccuracy accounts for a measured graded record.
func (a *Accumulator) addAccuracy(r *record.Request) {
	if a.acc == nil {
		a.acc = &accAcc{tasks: map[string]*AccuracyStat{}}
	}
	a.acc.all.add(r)
	t := a.acc.tasks[r.AccuracyTask]
	if t == nil {
		t = &AccuracyStat{Task: r.AccuracyTask}
		a.acc.tasks[r.AccuracyTask] = t
	}
	t.add(r)
}

func (a *Accumulator) accuracySummary() *Accuracy {
	if a.acc == nil {
		return nil
	}
	out := &Accuracy{All: a.acc.all}
	out.All.finish()
	for _, t := range a.acc.tasks {
		x := *t
		x.finish()
		out.Tasks = append(out.Tasks, x)
	}
	sort.Slice(out.Tasks, func(i, j int) bool { return out.Tasks[i].Task < out.Tasks[j].Task })
	return out
}

// json is summary.json's "accuracy" object.
func (x *Accuracy) json() map[string]any {
	m := map[string]any{"overall": x.All, "tasks": x.Tasks, "confidence": 0.95, "interval": "wilson"}
	if x.Settings != nil {
		m["settings"] = x.Settings
	}
	return m
}
