// Package trace reads LLM-serving traces (Mooncake, Bailian, BurstGPT, Azure,
// Splitwise/Vidur, AIPerf single- and multi-turn) into one request model,
// [Row], streaming and with errors that name the file, line and field.
//
// Everything downstream (analysis, synthesis, the replay schedule, prompt
// synthesis) consumes Rows and never looks at a source format again.
package trace
