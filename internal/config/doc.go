// Package config reads the YAML files of `reprise profile -f`, `reprise
// replay -f` and `reprise sweep -f` and turns them into the command line
// they stand for: a list of [Arg] (flag name, value, and the file line that
// set it), which the CLI applies before its own arguments, so that one
// flag mapping serves the file and the command line and flags given on the
// command line override the file.
//
// Two schemas exist. [AIPerf] is AIPerf's sectioned config (endpoint,
// input, loadgen, output, tokenizer, telemetry, multi_run, service,
// accuracy, with a sweep section and a reprise section for reprise's own
// flags), whose keys are AIPerf's flag names (dashes or underscores) or
// AIPerf's field names. [Flat] is a map of reprise's own flag names, for
// replay and sweep. An unknown key is an [*Error] that names the file, the
// line and the key, and suggests the nearest known key.
//
// The format is specified in docs/format/config.md; the design is
// docs/design/0024-config-files.md.
package config
