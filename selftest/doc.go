// Package selftest measures how precisely this machine can time an LLM
// server's responses, and up to what load: `reprise selftest`.
//
// [Run] starts the mock server (internal/mockserver) in a child process
// — the server under test is always another process, so the two share
// the machine's cores as a real client and server do — and replays a load
// stepped up in doubles with [reprise.Run], the same entry point as
// `reprise replay`. Each step's records are read back from its run
// directory and joined with the server's oracle log (the JSONL
// --event-log, which says when every token was written): the distance of
// each client stamp from its write is the client's error (internal/oracle,
// as BenchmarkTTFTError measures it). The largest step whose TTFT, ITL and
// E2E errors stay under Config.MaxError at p99 is the safe load. What
// limits the machine is read from the first step over the bound: the CPU
// of client and server together, the timer, the kernel's share of the
// client's CPU (loopback TCP), or the client waiting while the machine had
// cores to spare (other processes).
//
// The co-located case replays the safe load against a mock server that
// burns CPU per token, as an inference server on the same box would, once
// with the client as it is and once with the client at nice −20 (or, where
// this user may not lower it, the server at nice 10).
//
// The result is a calibration file (selftest/calibration,
// docs/format/calibration.md) that `reprise replay` applies.
package selftest
