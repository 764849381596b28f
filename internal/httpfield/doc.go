// Package httpfield checks HTTP header names, header values and request
// paths that come from data (trace rows, templates, adapters) against
// RFC 9110's field syntax before they are written into a request: a CR or
// LF in a value would end the header and start another (header injection)
// or end the request and start a second one (request smuggling); a space
// in a path would end the request target.
package httpfield
