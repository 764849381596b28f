// Package assemble is `reprise report` (and `reprise plot`) behind the
// flags: it expands the directories it is given into the runs a report
// shows (a sweep directory into its measured points, a directory of
// repeated runs into its runs, plain runs that differ in load into a
// series in load order), adds the comparison of several runs with the
// first, and writes the report with [report.Build] ([Write], [Run]).
//
// It is a package of its own, not part of internal/report, because it
// calls internal/sweep and internal/compare, which import internal/report
// for its [report.Section] type.
package assemble
