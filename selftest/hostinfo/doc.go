// Package hostinfo describes the machine a run ran on, for the run's
// manifest: its name, operating system and architecture, CPU model and
// count, kernel release and clock source. On Linux it reads /proc and
// /sys; a field it cannot read is empty, elsewhere too. Describe reads a
// few small files and costs well under a millisecond.
package hostinfo
