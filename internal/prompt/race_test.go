//go:build race

package prompt

// raceEnabled: the race detector makes the tokenizer ~5× slower, so the
// every-row Mooncake fidelity test (about 410M tokens counted) runs in the
// non-race step of scripts/test.sh instead.
const raceEnabled = true
