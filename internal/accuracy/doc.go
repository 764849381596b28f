// Package accuracy grades a server's answers to benchmark questions
// (MMLU, GSM8K, AIME-style competition math, or a user's own JSON Lines
// file) so that accuracy is measured beside latency, at the load of the
// run that carried the questions (docs/design/0021-accuracy.md).
//
// # Parts
//
//   - [Load] reads a benchmark's items (local files or the Hugging Face
//     Hub layout) into a [Set]; [Set.Messages] renders an item's prompt in
//     the benchmark's standard format (docs/format/accuracy.md).
//   - The graders ([Grade], [ExtractLetter], [ExtractNumber],
//     [NormalizeMath], [NormalizeText]) are pure functions of the response
//     text and the expected answer.
//   - [Wilson], [McNemar] and [TwoProportion] are the statistics: a
//     proportion's interval, and the test of two runs' difference, paired
//     by item or not.
//   - [Key] finds which item a prompt asks (the mock server's oracle).
//
// Everything here is safe for concurrent use once built; nothing is
// changed after [Load] returns.
package accuracy
