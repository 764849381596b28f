package arrowio

import (
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/engine/record"
)

func f64NaN(b *array.Float64Builder, v float64) {
	if math.IsNaN(v) {
		b.AppendNull()
		return
	}
	b.Append(v)
}

func metricsRecord(mem memory.Allocator, s []record.MetricSample) arrow.Record {
	b := array.NewRecordBuilder(mem, ServerMetricsSchema())
	defer b.Release()
	b.Reserve(len(s))
	tns := b.Field(0).(*array.Int64Builder)
	ts := b.Field(1).(*array.TimestampBuilder)
	target := b.Field(2).(*array.StringBuilder)
	metric := b.Field(3).(*array.StringBuilder)
	typ := b.Field(4).(*array.StringBuilder)
	labels := b.Field(5).(*array.StringBuilder)
	part := b.Field(6).(*array.StringBuilder)
	bound := b.Field(7).(*array.Float64Builder)
	value := b.Field(8).(*array.Float64Builder)
	for i := range s {
		x := &s[i]
		tns.Append(x.TimeNS)
		ts.Append(arrow.Timestamp(x.TimeNS))
		target.Append(x.Target)
		metric.Append(x.Metric)
		typ.Append(x.Type)
		strNZ(labels, x.Labels)
		strNZ(part, x.Part)
		f64NaN(bound, x.Bound)
		value.Append(x.Value)
	}
	return b.NewRecord()
}

func gpuRecord(mem memory.Allocator, s []record.GPUSample) arrow.Record {
	b := array.NewRecordBuilder(mem, GPUSchema())
	defer b.Release()
	b.Reserve(len(s))
	for i := range s {
		x := &s[i]
		b.Field(0).(*array.Int64Builder).Append(x.TimeNS)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(x.TimeNS))
		b.Field(2).(*array.StringBuilder).Append(x.Source)
		b.Field(3).(*array.Int32Builder).Append(x.GPU)
		strNZ(b.Field(4).(*array.StringBuilder), x.UUID)
		strNZ(b.Field(5).(*array.StringBuilder), x.Name)
		for j, v := range []float64{x.UtilPct, x.MemUsedBytes, x.MemTotalBytes, x.PowerW, x.EnergyJ, x.TempC, x.SMClockMHz} {
			f64NaN(b.Field(6+j).(*array.Float64Builder), v)
		}
	}
	return b.NewRecord()
}

// TelemetryWriter writes telemetry rows of type T to one table from its own
// goroutine: Write never blocks the caller (a scraper or sampler). When the
// queue is full the batch is dropped and counted. Write is safe for
// concurrent use; Close must be called once, after the last Write.
type TelemetryWriter[T any] struct {
	tw      *TableWriter
	build   func(memory.Allocator, []T) arrow.Record
	queue   chan []T
	done    chan struct{}
	mu      sync.RWMutex // guards closed against concurrent Write
	closed  bool
	dropped atomic.Int64
	err     error
	// closeErr is Close's result.
	closeErr error
}

// NewMetricsWriter returns the writer of server_metrics in run directory dir.
func NewMetricsWriter(dir string, cfg Config) (*TelemetryWriter[record.MetricSample], error) {
	return newTelemetryWriter(dir, ServerMetricsTable, ServerMetricsSchema(), cfg, metricsRecord)
}

// NewGPUWriter returns the writer of gpu in run directory dir.
func NewGPUWriter(dir string, cfg Config) (*TelemetryWriter[record.GPUSample], error) {
	return newTelemetryWriter(dir, GPUTable, GPUSchema(), cfg, gpuRecord)
}

func newTelemetryWriter[T any](dir, name string, schema *arrow.Schema, cfg Config,
	build func(memory.Allocator, []T) arrow.Record) (*TelemetryWriter[T], error) {
	tw, err := NewTableWriter(dir, name, schema, cfg)
	if err != nil {
		return nil, err
	}
	q := cfg.withDefaults().QueueBatches
	w := &TelemetryWriter[T]{tw: tw, build: build, queue: make(chan []T, q), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *TelemetryWriter[T]) loop() {
	defer close(w.done)
	for batch := range w.queue {
		if w.err != nil {
			continue
		}
		rec := w.build(memory.DefaultAllocator, batch)
		w.err = w.tw.Write(rec)
		rec.Release()
	}
}

// Write queues rows; the writer owns the slice after the call.
func (w *TelemetryWriter[T]) Write(rows []T) {
	if len(rows) == 0 {
		return
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.dropped.Add(int64(len(rows)))
		return
	}
	select {
	case w.queue <- rows:
	default:
		w.dropped.Add(int64(len(rows)))
	}
}

// Dropped returns the rows dropped because the disk could not keep up (or
// written after Close).
func (w *TelemetryWriter[T]) Dropped() int64 { return w.dropped.Load() }

// Close drains the queue, completes the file and returns the first error.
// Later calls return the same error.
func (w *TelemetryWriter[T]) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.queue)
		<-w.done
		w.closeErr = errors.Join(w.err, w.tw.Close())
	}
	return w.closeErr
}

// ReadMetricSamples reads the whole server_metrics table of a run
// directory into memory ([RunReader.MetricSamples] streams it).
func ReadMetricSamples(dir string) ([]record.MetricSample, error) {
	return collect(tableRows(nil, dir, ServerMetricsTable, appendMetricSamples))
}

// ReadGPUSamples reads the whole gpu table of a run directory into memory
// ([RunReader.GPUSamples] streams it).
func ReadGPUSamples(dir string) ([]record.GPUSample, error) {
	return collect(tableRows(nil, dir, GPUTable, appendGPUSamples))
}

// nullableString reads row i of a utf8 column, "" for null.
func nullableString(c *array.String, i int) string {
	if c.IsNull(i) {
		return ""
	}
	return strings.Clone(boundString(c.Value(i)))
}

// nullableFloat reads row i of a float64 column, NaN for null.
func nullableFloat(c *array.Float64, i int) float64 {
	if c.IsNull(i) {
		return math.NaN()
	}
	return c.Value(i)
}

func appendMetricSamples(out []record.MetricSample, rec arrow.Record) ([]record.MetricSample, error) {
	if err := checkVersion(rec, ServerMetricsVersion); err != nil {
		return out, err
	}
	c := &columns{rec: rec}
	tns := colAs[*array.Int64](c, "time_ns")
	target, metric, typ := colAs[*array.String](c, "target"), colAs[*array.String](c, "metric"), colAs[*array.String](c, "type")
	labels, part := colAs[*array.String](c, "labels"), colAs[*array.String](c, "part")
	bound, value := colAs[*array.Float64](c, "bound"), colAs[*array.Float64](c, "value")
	if len(c.errs) > 0 {
		return out, errors.Join(c.errs...)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		out = append(out, record.MetricSample{TimeNS: tns.Value(i), Target: nullableString(target, i),
			Metric: nullableString(metric, i), Type: nullableString(typ, i), Labels: nullableString(labels, i),
			Part: nullableString(part, i), Bound: nullableFloat(bound, i), Value: value.Value(i)})
	}
	return out, nil
}

func appendGPUSamples(out []record.GPUSample, rec arrow.Record) ([]record.GPUSample, error) {
	if err := checkVersion(rec, GPUVersion); err != nil {
		return out, err
	}
	c := &columns{rec: rec}
	tns, gpu := colAs[*array.Int64](c, "time_ns"), colAs[*array.Int32](c, "gpu")
	source, uuid, name := colAs[*array.String](c, "source"), colAs[*array.String](c, "uuid"), colAs[*array.String](c, "name")
	var f [7]*array.Float64
	for j, n := range []string{"util_pct", "mem_used_bytes", "mem_total_bytes", "power_w", "energy_j", "temp_c", "sm_clock_mhz"} {
		f[j] = colAs[*array.Float64](c, n)
	}
	if len(c.errs) > 0 {
		return out, errors.Join(c.errs...)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		out = append(out, record.GPUSample{
			TimeNS: tns.Value(i), Source: nullableString(source, i), GPU: gpu.Value(i),
			UUID: nullableString(uuid, i), Name: nullableString(name, i),
			UtilPct: nullableFloat(f[0], i), MemUsedBytes: nullableFloat(f[1], i), MemTotalBytes: nullableFloat(f[2], i),
			PowerW: nullableFloat(f[3], i), EnergyJ: nullableFloat(f[4], i), TempC: nullableFloat(f[5], i), SMClockMHz: nullableFloat(f[6], i),
		})
	}
	return out, nil
}
