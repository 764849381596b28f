// Package summarize is what `reprise summarize` does beyond its flags:
// recompute a run's summary from its record files, or the summaries of a
// directory of repeated runs and their across-run intervals, and print
// them as a table, summary.json or Go benchmark lines ([Run]). The texts,
// errors and exit codes are the command's, pinned by the CLI's tests.
package summarize
