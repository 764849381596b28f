package flagmap

import "github.com/reprise-bench/reprise"

// FileDataset maps AIPerf's dataset flags onto o when o reads a file (or a
// public dataset), where they shape the file's entries rather than a
// synthetic load: --num-dataset-entries (entries) caps the dataset,
// --num-sessions the sessions sent, and the shared system and user
// context prompt lengths go before every request of a conversation
// (reprise.TraceOptions.Entries and Sessions,
// reprise.PromptOptions.SharedSystemTokens and UserContextTokens). It
// reports whether o reads a file.
func FileDataset(o *reprise.Options, entries int) bool {
	if o.Trace.Path == "" && o.Trace.PublicDataset == "" {
		return false
	}
	o.Trace.Entries = entries
	o.Trace.Sessions, o.Synthetic.Sessions = o.Synthetic.Sessions, 0
	o.Prompts.SharedSystemTokens, o.Synthetic.SharedPrefix = o.Synthetic.SharedPrefix, 0
	o.Prompts.UserContextTokens, o.Synthetic.UserContext = o.Synthetic.UserContext, 0
	return true
}
