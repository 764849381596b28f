// Package printable makes text that came from a server or a file safe to
// print on a terminal: a server's error message, a trace's field, a run
// directory's summary. Control characters in it (ESC starts the escape
// sequences that clear the screen, retitle the window or, with OSC 52,
// write the user's clipboard; CR and BEL, C1 controls such as CSI 0x9b)
// are printed escaped, as Go escapes them in a quoted string, never raw.
package printable
