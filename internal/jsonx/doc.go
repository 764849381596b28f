// Package jsonx appends JSON without reflection: string literals (the one
// JSON string escaper of reprise, used for request bodies, trace and record
// files, and the mock server's responses), and the members of an object
// spliced into another (AppendMembers, for request bodies' extra fields).
//
// Its output is byte for byte what encoding/json writes for a string with
// HTML escaping off (json.Encoder.SetEscapeHTML(false)): quote, backslash
// and control characters escaped (\b \f \n \r \t in short form, the rest
// as \u00XX), U+2028 and U+2029 escaped (JavaScript reads them as line
// ends), invalid UTF-8 replaced by \ufffd. <, > and & are not escaped: the
// output goes to servers and files, never into HTML, and escaping them
// would make a prompt of code or markup up to six times longer on the wire
// than the text the trace describes.
//
// # Performance considerations
//
// Runs of bytes that need no escape are copied at once; nothing allocates
// when dst has room (TestAppendAllocs).
package jsonx
