// Package flagmap maps the values of reprise's command-line options, read
// by flag name through [Values], to the library's configuration:
// [reprise.Options], [replay.Config] and the sweep and search configs. The
// CLI passes its *cli.Command; the YAML config files of internal/config
// render to the same flags, so one mapping serves both.
//
// [Profile] is the mapping of `reprise profile`: AIPerf's option names
// (aiperf profile's flags, as reprise spells them) onto the options
// replay's flags give, with AIPerf's defaults. [ProfileSweep], [Recipe]
// and [Search] read its sweep and search options. Mappings of more
// option groups attach as [Hook]s.
//
// The design is docs/design/0031-cli-maps-flags.md.
package flagmap
