// Package telemetry collects the server's and the GPUs' view of a run on the
// same clock as the client's records: Prometheus /metrics scrapes of the
// inference server ([Scraper]), DCGM exporter pages and local NVML sampling
// ([GPUSampler]), and their summaries over the profile window ([Summarize],
// [SummarizeGPU]).
//
// Telemetry never affects request timing: every target has its own
// goroutine, HTTP timeout and page-size limit; gaps and errors are recorded
// as data (the synthetic series "reprise:scrape_up") and the run goes on.
// Memory is bounded: samples are handed to a sink as they are read, and the
// summariser keeps only the few series it knows.
package telemetry
