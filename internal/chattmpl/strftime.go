package chattmpl

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats now with a Python strftime format, for the
// strftime_now helper transformers gives templates. It knows the
// directives chat templates use (%d %b %Y and the other date and time
// fields of the C locale); any other directive is kept as written.
func strftime(now time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(now.Year()))
		case 'y':
			b.WriteString(now.Format("06"))
		case 'm':
			b.WriteString(now.Format("01"))
		case 'd':
			b.WriteString(now.Format("02"))
		case 'b':
			b.WriteString(now.Format("Jan"))
		case 'B':
			b.WriteString(now.Format("January"))
		case 'a':
			b.WriteString(now.Format("Mon"))
		case 'A':
			b.WriteString(now.Format("Monday"))
		case 'H':
			b.WriteString(now.Format("15"))
		case 'I':
			b.WriteString(now.Format("03"))
		case 'M':
			b.WriteString(now.Format("04"))
		case 'S':
			b.WriteString(now.Format("05"))
		case 'p':
			b.WriteString(now.Format("PM"))
		case 'j':
			b.WriteString(now.Format("002"))
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}
