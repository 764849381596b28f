//go:build !race

package engine

func raceIOSync(uintptr) {}
