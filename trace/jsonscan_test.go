package trace

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestLeadingDigits8 checks the word-at-a-time digit count against a byte
// loop for every byte value at every position after a run of digits.
func TestLeadingDigits8(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 8 {
		for c := range 256 {
			var b [8]byte
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			for i := range n {
				b[i] = '0' + byte(rng.IntN(10))
			}
			b[n] = byte(c)
			want := 0
			for want < 8 && b[want] >= '0' && b[want] <= '9' {
				want++
			}
			if got := leadingDigits8(binary.LittleEndian.Uint64(b[:])); got != want {
				t.Fatalf("%q: %d leading digits, want %d", b, got, want)
			}
		}
	}
}

// TestDigits8 checks the value of the first n of 8 digits against
// strconv.
func TestDigits8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		n := 1 + rng.IntN(8)
		var b [8]byte
		for i := range b {
			b[i] = '0' + byte(rng.IntN(10))
		}
		want, err := strconv.ParseUint(string(b[:n]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := digits8(binary.LittleEndian.Uint64(b[:]) << (64 - 8*n)); got != want {
			t.Fatalf("%q first %d: %d, want %d", b, n, got, want)
		}
	}
}

// TestAppendIDsMatchesParseID checks appendIDs, whose fast paths read 16
// and 8 bytes at a time, against parseID (the exact slow path) applied to each
// element: random arrays of ids of 1 to 21 digits, leading zeros, signs,
// fractions and exponents, with varied spacing, runs of consecutive ids
// (the fastest path's shortcut), ending at the end of the buffer or not
// (the fast paths need 16 and 8 bytes).
func TestAppendIDsMatchesParseID(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	digits := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteByte('0' + byte(rng.IntN(10)))
		}
		return sb.String()
	}
	elem := func() string {
		switch rng.IntN(12) {
		case 0:
			return "0"
		case 1:
			return "0" + digits(1+rng.IntN(6)) // leading zero
		case 2:
			return "-" + digits(1+rng.IntN(19))
		case 3:
			return digits(1+rng.IntN(5)) + "." + digits(1+rng.IntN(3))
		case 4:
			return digits(1+rng.IntN(3)) + "e" + digits(1)
		case 5:
			return strconv.FormatUint(rng.Uint64(), 10) // up to 20 digits
		case 6:
			return "1" + digits(20) // 21 digits: out of range
		default:
			return strconv.FormatUint(rng.Uint64N(1e9), 10)
		}
	}
	seps := []string{", ", ",", " , ", ",  ", "\t,\t"}
	for trial := range 40000 {
		k := rng.IntN(12)
		elems := make([]string, k)
		for i := range elems {
			elems[i] = elem()
		}
		if trial%2 == 1 {
			// Runs of consecutive ids, as new blocks are numbered, across
			// a last digit of 9 and a change of length (99, 100, ...).
			x := uint64(rng.IntN(12)) * []uint64{1, 10, 100, 1000, 10000, 100000, 1000000}[rng.IntN(7)]
			x -= min(x, uint64(rng.IntN(4)))
			for i := range elems {
				if rng.IntN(6) > 0 {
					elems[i] = strconv.FormatUint(x, 10)
					x++
				}
			}
		}
		var sb strings.Builder
		sb.WriteString(`{"hash_ids": [`)
		for i, e := range elems {
			if i > 0 {
				sb.WriteString(seps[rng.IntN(len(seps))])
			}
			sb.WriteString(e)
		}
		sb.WriteString("]")
		if trial%2 == 0 {
			sb.WriteString(`, "input_length": 512}`)
		}
		v := []byte(sb.String())
		start := strings.IndexByte(sb.String(), '[')
		got, end, msg := appendIDs(nil, v, start)

		var want []uint64
		wantMsg := ""
		for _, e := range elems {
			x, m := parseID([]byte(e))
			if m != "" {
				wantMsg = m
				break
			}
			want = append(want, x)
		}
		if (msg != "") != (wantMsg != "") {
			t.Fatalf("%s: error %q, want %q", v, msg, wantMsg)
		}
		if msg != "" {
			continue
		}
		if end != strings.IndexByte(sb.String(), ']')+1 {
			t.Fatalf("%s: end %d", v, end)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", v, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: %v, want %v", v, got, want)
			}
		}
	}
}

// TestPlainBytes8 checks the word-at-a-time string scan against a byte
// loop for every byte value at every position after plain bytes.
func TestPlainBytes8(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	plain := func(c byte) bool { return c != '"' && c != '\\' && c >= 0x20 && c < 0x80 }
	for n := range 8 {
		for c := range 256 {
			var b [8]byte
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			for i := range n {
				b[i] = byte(0x20 + rng.IntN(0x60))
				for !plain(b[i]) {
					b[i] = byte(0x20 + rng.IntN(0x60))
				}
			}
			b[n] = byte(c)
			want := 0
			for want < 8 && plain(b[want]) {
				want++
			}
			if got := plainBytes8(binary.LittleEndian.Uint64(b[:])); got != want {
				t.Fatalf("%q: %d plain bytes, want %d", b, got, want)
			}
		}
	}
}
