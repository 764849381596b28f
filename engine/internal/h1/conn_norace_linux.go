//go:build !race

package h1

func raceIOSync(uintptr) {}
