// Package runout holds what the commands that run load print about a run:
// the start line and notes ([Start]), the report at its end ([Report]) and
// the notes they are made of. The CLI passes its streams; the texts are
// pinned by the CLI's tests.
package runout
