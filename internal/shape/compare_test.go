package shape

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxLines is the longest a function may be: about two screens.
const maxLines = 120

func compareLong(want, got []string) []string {
	wm, gm := lengths(want), lengths(got)
	var msgs []string
	for _, name := range sortedKeys(gm) {
		switch w, ok := wm[name]; {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("%s is %d lines, over %d: split it", name, gm[name], maxLines))
		case gm[name] > w:
			msgs = append(msgs, fmt.Sprintf("%s grew from %d to %d lines: split it rather", name, w, gm[name]))
		case gm[name] < w:
			msgs = append(msgs, fmt.Sprintf("%s shrank from %d to %d lines: update the list (go test ./internal/shape -update)", name, w, gm[name]))
		}
	}
	for _, name := range sortedKeys(wm) {
		if _, ok := gm[name]; !ok {
			msgs = append(msgs, fmt.Sprintf("%s is no longer over %d lines (or is gone): update the list (go test ./internal/shape -update)", name, maxLines))
		}
	}
	return msgs
}

func lengths(lines []string) map[string]int {
	m := map[string]int{}
	for _, l := range lines {
		name, n, _ := strings.Cut(l, " ")
		m[name], _ = strconv.Atoi(n)
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// compareCircles: every circle found must be one listed or part of one
// (a circle that lost files is an improvement, but the list must say
// so); every listed circle must still stand whole.
func compareCircles(want, got []string) []string {
	var msgs []string
	for _, g := range got {
		if !slices.Contains(want, g) {
			if within(g, want) {
				msgs = append(msgs, fmt.Sprintf("the circle %q is smaller than listed: update the list (go test ./internal/shape -update)", g))
			} else {
				msgs = append(msgs, fmt.Sprintf("new circle between files: %s: make one use the other, not both ways", g))
			}
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) && !anyWithin(w, got) {
			msgs = append(msgs, fmt.Sprintf("the circle %q is gone: update the list (go test ./internal/shape -update)", w))
		}
	}
	return msgs
}

// within reports whether circle c's files are all in one circle of list.
func within(c string, list []string) bool {
	files := strings.Fields(c)
	for _, l := range list {
		have := strings.Fields(l)
		if !slices.ContainsFunc(files, func(f string) bool { return !slices.Contains(have, f) }) {
			return true
		}
	}
	return false
}

// anyWithin reports whether some circle of list lies within circle c.
func anyWithin(c string, list []string) bool {
	for _, l := range list {
		if within(l, []string{c}) {
			return true
		}
	}
	return false
}
