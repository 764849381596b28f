//go:build !race

package prompt

const raceEnabled = false
