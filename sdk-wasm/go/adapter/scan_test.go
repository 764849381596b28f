package adapter

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// walk reads the value at the cursor with the loop API (BeginObject,
// NextKey, BeginArray, NextElem, Str, Uint) and prints what it saw.
func walk(s *Scanner, out *strings.Builder, depth int) {
	if depth > 64 {
		s.fail()
		return
	}
	switch c := s.Peek(); {
	case c == '{':
		s.BeginObject()
		out.WriteByte('{')
		for k, ok := s.NextKey(); ok; k, ok = s.NextKey() {
			fmt.Fprintf(out, "%q:", k)
			walk(s, out, depth+1)
		}
		out.WriteByte('}')
	case c == '[':
		s.BeginArray()
		out.WriteByte('[')
		for s.NextElem() {
			walk(s, out, depth+1)
			out.WriteByte(',')
		}
		out.WriteByte(']')
	case c == '"':
		raw, esc := s.Str()
		fmt.Fprintf(out, "%q/%v", raw, esc)
	case c == '-' || c-'0' <= 9:
		v, _ := s.Uint()
		fmt.Fprint(out, v)
	default:
		s.Skip()
		out.WriteByte('.')
	}
}

func TestScannerLoops(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{` {"a": 1, "b" :{"c":"x\"y"}, "d":[1, {"e": -2.5e3}, []], "f":null, "g":{}} `,
			`{"a":1"b":{"c":"x\\\"y"/true}"d":[1,{"e":0},[],]"f":."g":{}}`},
		{`[]`, `[]`},
		{`"s"`, `"s"/false`},
		{`{"n":12345678901234}`, `{"n":4294967294}`},
	} {
		s := NewScanner([]byte(c.in))
		var out strings.Builder
		walk(&s, &out, 0)
		s.End()
		if s.Err() || out.String() != c.want {
			t.Errorf("%s: got %s (err %v), want %s", c.in, out.String(), s.Err(), c.want)
		}
	}
	for _, bad := range []string{`{"a":1,}`, `{"a" 1}`, `{"a":1`, `{,"a":1}`, `{"a":1 "b":2}`, `[1,]`, `[,1]`, `[1 2]`, `[1`,
		`{"a":"x` + "\x01" + `"}`, `{"a":tru}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":"\"}`, `{"a":1}x`} {
		s := NewScanner([]byte(bad))
		var out strings.Builder
		walk(&s, &out, 0)
		s.End()
		if !s.Err() {
			t.Errorf("%s: no error (walked %s)", bad, out.String())
		}
	}
}

// TestScannerNotObject checks BeginObject and BeginArray on other values:
// false, the value skipped, no error.
func TestScannerNotObject(t *testing.T) {
	s := NewScanner([]byte(`[null, "x", 3]`))
	s.BeginArray()
	for s.NextElem() {
		if s.BeginObject() || s.Err() {
			t.Fatalf("BeginObject on a non-object at %d: true or error", s.Pos())
		}
	}
	s.End()
	if s.Err() {
		t.Fatal("error after the array")
	}
}

// FuzzScannerLoops checks the loop API against Skip: walking a value
// consumes exactly what Skip consumes and fails exactly when Skip fails,
// and strings found by the word-at-a-time scan match a byte loop.
func FuzzScannerLoops(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\\\"d"}],"e":null}`, `[{"k": "v"}, [], {}, -1.5e+9, true, false]`,
		`{"long key with more than eight bytes":"a string that is also longer than eight"}`, "\"\x1f\"", `{"a":1,}`, `"\u00e9\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a := NewScanner(b)
		a.Skip()
		w := NewScanner(b)
		var out strings.Builder
		walk(&w, &out, 0)
		if a.Err() != w.Err() || a.Pos() != w.Pos() {
			t.Fatalf("Skip: pos %d err %v; loops: pos %d err %v", a.Pos(), a.Err(), w.Pos(), w.Err())
		}
		if len(b) > 0 && b[0] == '"' {
			e, esc := strEnd(b, 1)
			we, wesc := -1, false
			for i := 1; i < len(b); i++ {
				if c := b[i]; c == '"' {
					we = i
					break
				} else if c == '\\' {
					wesc = true
					i++
				} else if c < 0x20 {
					break
				}
			}
			if e != we || (e >= 0 && esc != wesc) {
				t.Fatalf("strEnd = %d, %v; byte loop %d, %v", e, esc, we, wesc)
			}
		}
	})
}

// FuzzUint checks Uint's value against math/big on digit runs of any
// length (the scanner reads eight digits per step): min(value,
// 0xFFFFFFFE), 0 for negatives, fractions and exponents ignored.
func FuzzUint(f *testing.F) {
	for _, s := range []string{"0", "1760000000", "12345678", "123456789012345678901234567890", "-5", "4294967294", "4294967295",
		"99999999999999999", "1.5e3", "00000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		num := strings.TrimLeft(in, " \t\n\r") // Uint skips white space first
		digits := strings.TrimPrefix(num, "-")
		end := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(digits)
		}
		s := NewScanner([]byte(in))
		v, ok := s.Uint()
		if end == 0 {
			if ok || !s.Err() {
				t.Fatalf("Uint(%q) = %d, %v without digits", in, v, ok)
			}
			return
		}
		if !ok {
			if !s.Err() {
				t.Fatalf("Uint(%q) failed without an error", in)
			}
			return // a bad fraction or exponent
		}
		want := new(big.Int)
		want.SetString(digits[:end], 10)
		switch {
		case num[0] == '-':
			want.SetInt64(0)
		case want.Cmp(big.NewInt(0xFFFFFFFE)) > 0:
			want.SetInt64(0xFFFFFFFE)
		}
		if uint64(v) != want.Uint64() {
			t.Fatalf("Uint(%q) = %d, want %d", in, v, want.Uint64())
		}
	})
}
