package reprise

import (
	"fmt"

	"github.com/reprise-bench/reprise/arrowio"
	"github.com/reprise-bench/reprise/engine/summary"
)

// writeTimeSlices summarizes the finished run's records per
// o.Output.SliceDuration, puts the slices in s (summary.json is written
// again with them) and, with the AIPerf export, writes AIPerf's
// time-slice files. The records table must be closed.
func writeTimeSlices(run *arrowio.Run, dir string, o *Options, s *summary.Summary, w *arrowio.WriterReport) error {
	rr, err := arrowio.Open(dir)
	if err != nil {
		return fmt.Errorf("read the records for time slices: %w", err)
	}
	ts, err := rr.TimeSlices(o.Output.SliceDuration, s.Run, s.Options)
	if err != nil {
		return fmt.Errorf("read the records for time slices: %w", err)
	}
	s.TimeSlices = ts
	if err := run.WriteSummary(s, w); err != nil {
		return err
	}
	if o.Output.Export == "aiperf" {
		return arrowio.WriteAIPerfTimeSlices(dir, o.Output.ExportPrefix, o.Output.SliceDuration, ts)
	}
	return nil
}
