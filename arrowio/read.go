package arrowio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/reprise-bench/reprise/engine/record"
)

// ErrNoTable is returned (wrapped) when a run directory has no file of the
// requested table.
var ErrNoTable = errors.New("no such table")

// TableFiles returns the complete files of table name in the run directory
// dir, in order: dir/name.parquet, dir/name.arrow or dir/name.jsonl, or the parts
// dir/name/part-*.{parquet,arrow} sorted by name. Files still being written
// (".tmp") are skipped. It returns an error wrapping ErrNoTable if there
// are none.
func TableFiles(dir, name string) ([]string, error) {
	var files []string
	for _, f := range allFormats {
		p := filepath.Join(dir, name+f.Ext())
		if st, err := os.Lstat(p); err == nil {
			if !st.Mode().IsRegular() {
				return nil, fmt.Errorf("read %s: %w", p, ErrNotRegular)
			}
			files = append(files, p)
		}
	}
	pdir := filepath.Join(dir, name)
	if st, err := os.Lstat(pdir); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("read %s: a symbolic link, not the directory of the table's parts: %w", pdir, ErrNotRegular)
	}
	ents, err := os.ReadDir(pdir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var parts []string
	for _, e := range ents {
		n := e.Name()
		if !isPartName(n) {
			continue
		}
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("read %s: %w", filepath.Join(pdir, n), ErrNotRegular)
		}
		parts = append(parts, filepath.Join(pdir, n))
	}
	sort.Strings(parts)
	files = append(files, parts...)
	if len(files) == 0 {
		return nil, fmt.Errorf("read %s: %w %q (want %s.parquet or %s/part-*.parquet)", dir, ErrNoTable, name, name, name)
	}
	return files, nil
}

// ReadTable calls fn with every record batch of table name in the run
// directory dir (see [TableFiles]), file by file. The record is valid only
// during the call (fn must Retain it to keep it). Errors name the file.
func ReadTable(dir, name string, fn func(path string, rec arrow.Record) error) error {
	files, err := TableFiles(dir, name)
	if err != nil {
		return err
	}
	for _, p := range files {
		if err := readFile(p, true, func(rec arrow.Record) error { return fn(p, rec) }); err != nil {
			return err
		}
	}
	return nil
}

// ReadFile calls fn with every record batch of one Parquet, Arrow IPC or
// JSON Lines file (chosen by extension; a JSON Lines file's schema is its
// table's, by file name, with dictionary columns read as utf8). A corrupt
// file gives an error naming it, never a panic.
func ReadFile(path string, fn func(rec arrow.Record) error) error {
	return readFile(path, false, fn)
}

// readFile is ReadFile; inRun refuses a file that is not a regular file
// of its own (openRunFile), as every file of a run directory must be.
func readFile(path string, inRun bool, fn func(rec arrow.Record) error) (err error) {
	inFn := false // a panic of fn's is fn's, not the file's
	defer func() {
		// The parquet and IPC decoders panic on some corrupt inputs.
		if r := recover(); r != nil {
			if inFn {
				panic(r)
			}
			if r == errBatchTooLarge {
				err = fmt.Errorf("read %s: a record batch takes more than %d bytes decoded: not a file reprise wrote", path, MaxBatchBytes)
				return
			}
			err = fmt.Errorf("read %s: corrupt file: %v", path, r)
		}
	}()
	call := fn
	fn = func(rec arrow.Record) error {
		inFn = true
		err := call(rec)
		inFn = false
		return err
	}
	var f *os.File
	if inRun {
		f, _, err = openRunFile(path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(path, FormatArrow.Ext()):
		err = readIPC(f, fn)
	case strings.HasSuffix(path, FormatJSONL.Ext()):
		err = readJSONL(f, strings.TrimSuffix(filepath.Base(path), FormatJSONL.Ext()), fn)
	default:
		err = readParquet(f, fn)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// checkRowGroupSize refuses row group rg when its metadata says it holds
// more than MaxRowBytes a row, or MaxBatchBytes in all, uncompressed: what
// decoding it would take, known before anything is decompressed.
func checkRowGroupSize(pf *file.Reader, rg int) error {
	md := pf.MetaData().RowGroup(rg)
	rows := md.NumRows()
	limit := min(int64(MaxBatchBytes), max(rows, 1)*MaxRowBytes)
	var total int64
	for c := 0; c < md.NumColumns(); c++ {
		cc, err := md.ColumnChunk(c)
		if err != nil {
			return err
		}
		n := cc.TotalUncompressedSize()
		if n < 0 || total+n > limit || total+n < total {
			return fmt.Errorf("row group %d (%d rows) holds more than %d bytes uncompressed (column %s: %d bytes): "+
				"not a file reprise wrote (its rows take far less than %d bytes each)", rg, rows, limit, cc.PathInSchema().String(), n, MaxRowBytes)
		}
		total += n
	}
	return nil
}

func readParquet(f *os.File, fn func(arrow.Record) error) error {
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return err
	}
	defer pf.Close()
	// pqarrow resolves column chunks in goroutines of its own, where a
	// corrupt footer's panic could not be recovered: touch every column
	// chunk here first (the caller recovers), so such files fail cleanly.
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		if err := checkRowGroupSize(pf, rg); err != nil {
			return err
		}
		rgr := pf.RowGroup(rg)
		for c := 0; c < pf.MetaData().Schema.NumColumns(); c++ {
			if _, err := rgr.GetColumnPageReader(c); err != nil {
				return err
			}
		}
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return err
	}
	// The file's key-value metadata (reprise.schema) is not part of the
	// Arrow schema pqarrow restores; put it back.
	schema, err := fr.Schema()
	if err != nil {
		return err
	}
	kv := pf.MetaData().KeyValueMetadata()
	md := arrow.NewMetadata(kv.Keys(), kv.Values())
	schema = arrow.NewSchema(schema.Fields(), &md)
	// One row group per batch: arrow v17's pqarrow rejects a batch whose
	// dictionary columns span row groups (its chunksToSingle returns an
	// error for that case), and panics reading the second batch of a row
	// group with dictionary columns, so a batch is exactly one row group
	// (32,768 rows as reprise writes them; memory is one row group's).
	for rg := 0; rg < pf.NumRowGroups(); rg++ {
		fr.Props.BatchSize = max(pf.MetaData().RowGroup(rg).NumRows(), 1)
		rr, err := fr.GetRecordReader(context.Background(), nil, []int{rg})
		if err != nil {
			return err
		}
		for rr.Next() {
			r := rr.Record()
			rec := array.NewRecord(schema, r.Columns(), r.NumRows())
			err := fn(rec)
			rec.Release()
			if err != nil {
				rr.Release()
				return err
			}
		}
		err = rr.Err()
		rr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return nil
}

// ipcBatchLimit is MaxBatchBytes, a variable so that a test can bound a
// small file.
var ipcBatchLimit int64 = MaxBatchBytes

func readIPC(f *os.File, fn func(arrow.Record) error) error {
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(newBoundedAllocator(ipcBatchLimit)))
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			return err
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
	return nil
}

// checkVersion returns an error unless rec's schema carries want under
// SchemaKey.
func checkVersion(rec arrow.Record, want string, older ...string) error {
	md := rec.Schema().Metadata()
	i := md.FindKey(SchemaKey)
	if i < 0 {
		return fmt.Errorf("no %s metadata: not a reprise %s file", SchemaKey, strings.Split(want, "/")[0])
	}
	got := md.Values()[i]
	gotTable, _, _ := strings.Cut(got, "/")
	wantTable, _, _ := strings.Cut(want, "/")
	switch {
	case gotTable != wantTable:
		return fmt.Errorf("%s is %q: the %s table, not %s", SchemaKey, got, gotTable, wantTable)
	case got != want && !slices.Contains(older, got):
		return fmt.Errorf("%s is %q; this reprise reads %s (use the reprise version that wrote it, or a newer one)",
			SchemaKey, got, strings.Join(append([]string{strconv.Quote(want)}, quoteAll(older)...), ", "))
	}
	return nil
}

func quoteAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strconv.Quote(v)
	}
	return out
}

// ReadRequests reads the whole records table of a run directory into
// memory, in file order ([RunReader.Requests] streams it; its doc says how
// nulls are read).
func ReadRequests(dir string) ([]record.Request, error) {
	return collect(tableRows(nil, dir, RecordsTable, appendRequests))
}

// ReadEvents reads the whole events table of a run directory into memory
// ([RunReader.Events] streams it).
func ReadEvents(dir string) ([]record.Event, error) {
	return collect(tableRows(nil, dir, EventsTable, appendEvents))
}

// collect gathers an iterator's rows, stopping at its error.
func collect[T any](rows iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range rows {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// columns looks up a record's columns by name, collecting type errors.
type columns struct {
	rec  arrow.Record
	errs []error
}

func (c *columns) col(name string) arrow.Array {
	idx := c.rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		c.errs = append(c.errs, fmt.Errorf("column %s missing", name))
		return nil
	}
	return c.rec.Column(idx[0])
}

// optCol is colAs for a column appended within a version: a file written
// before it has none, which is no error (the zero T is returned).
func optCol[T arrow.Array](c *columns, name string) T {
	if len(c.rec.Schema().FieldIndices(name)) == 0 {
		var zero T
		return zero
	}
	return colAs[T](c, name)
}

func colAs[T arrow.Array](c *columns, name string) T {
	a := c.col(name)
	t, ok := a.(T)
	if !ok && a != nil {
		var zero T
		c.errs = append(c.errs, fmt.Errorf("column %s has type %s, want %T", name, a.DataType(), zero))
	}
	return t
}

// strCol reads a utf8 or dictionary-of-utf8 column.
type strCol struct {
	s *array.String
	d *array.Dictionary
	v *array.String // dictionary values
}

func (c *columns) str(name string) strCol {
	switch a := c.col(name).(type) {
	case *array.String:
		return strCol{s: a}
	case *array.Dictionary:
		if v, ok := a.Dictionary().(*array.String); ok {
			return strCol{d: a, v: v}
		}
		c.errs = append(c.errs, fmt.Errorf("column %s: dictionary of %s, want utf8", name, a.Dictionary().DataType()))
	case nil:
	default:
		c.errs = append(c.errs, fmt.Errorf("column %s has type %s, want utf8", name, a.DataType()))
	}
	return strCol{}
}

// optStr is str for a column appended within a version: absent in older
// files, where every value reads as "".
func (c *columns) optStr(name string) strCol {
	if len(c.rec.Schema().FieldIndices(name)) == 0 {
		return strCol{}
	}
	return c.str(name)
}

func (s strCol) at(i int) string {
	switch {
	case s.s != nil:
		if s.s.IsNull(i) {
			return ""
		}
		return strings.Clone(boundString(s.s.Value(i)))
	case s.d != nil:
		if s.d.IsNull(i) {
			return ""
		}
		return strings.Clone(boundString(s.v.Value(s.d.GetValueIndex(i))))
	}
	return ""
}

func i64or(a *array.Int64, i int, absent int64) int64 {
	if a.IsNull(i) {
		return absent
	}
	return a.Value(i)
}

func i32or(a *array.Int32, i int, absent int32) int32 {
	if a.IsNull(i) {
		return absent
	}
	return a.Value(i)
}

func appendRequests(out []record.Request, rec arrow.Record) ([]record.Request, error) {
	if err := checkVersion(rec, RecordsVersion, olderRecordsVersions...); err != nil {
		return out, err
	}
	c := &columns{rec: rec}
	requestID := colAs[*array.Uint64](c, "request_id")
	traceRow := colAs[*array.Int64](c, "trace_row")
	sessionID := c.str("session_id")
	turn := colAs[*array.Int32](c, "turn")
	phase := c.str("phase")
	senderID := colAs[*array.Int32](c, "sender_id")
	var times [len(timeCols)]*array.Int64
	for i, tc := range timeCols {
		times[i] = colAs[*array.Int64](c, tc.ns)
	}
	ttft, ttfo, ttst := colAs[*array.Int64](c, "ttft_ns"), colAs[*array.Int64](c, "ttfo_ns"), colAs[*array.Int64](c, "ttst_ns")
	itl := colAs[*array.Float64](c, "itl_ns")
	e2e, lateness := colAs[*array.Int64](c, "e2e_ns"), colAs[*array.Int64](c, "lateness_ns")
	fromIntended, sessionDelay := colAs[*array.Int64](c, "latency_from_intended_ns"), colAs[*array.Int64](c, "session_delay_ns")
	inTok, outTok := colAs[*array.Int32](c, "input_tokens"), colAs[*array.Int32](c, "output_tokens")
	reasTok, maxTok := colAs[*array.Int32](c, "reasoning_tokens"), colAs[*array.Int32](c, "max_tokens")
	sPrompt, sCompl := colAs[*array.Int32](c, "server_prompt_tokens"), colAs[*array.Int32](c, "server_completion_tokens")
	sReas, sCached := colAs[*array.Int32](c, "server_reasoning_tokens"), colAs[*array.Int32](c, "server_cached_tokens")
	eCached := colAs[*array.Int32](c, "expected_cached_tokens")
	traceInTok := optCol[*array.Int32](c, "trace_input_tokens") // appended within v1
	readLag := optCol[*array.Int64](c, "read_lag_ns")           // appended within v1
	tokSource := c.optStr("output_tokens_source")               // appended within v1
	tokDiff := optCol[*array.Int32](c, "server_minus_client_output_tokens")
	extras := c.optStr("server_extras")
	cancelAfter := optCol[*array.Int64](c, "cancel_after_ns") // appended within v1
	taskID, parentReq := optCol[*array.Int64](c, "task_id"), optCol[*array.Int64](c, "parent_request_id")
	depth := optCol[*array.Int32](c, "depth")
	events, contentEvents := colAs[*array.Int32](c, "events"), colAs[*array.Int32](c, "content_events")
	reads, maxPerRead := colAs[*array.Int32](c, "reads"), colAs[*array.Int32](c, "max_events_per_read")
	bytesRecv, bytesSent := colAs[*array.Int64](c, "bytes_received"), colAs[*array.Int64](c, "bytes_sent")
	status := colAs[*array.Int32](c, "status_code")
	errKind, errMsg, finish := c.str("error_kind"), c.str("error_message"), c.str("finish_reason")
	connReused := colAs[*array.Boolean](c, "conn_reused")
	retries := colAs[*array.Int32](c, "retries")
	retryErrors := optCol[*array.String](c, "retry_errors") // appended within v1
	target := optCol[*array.Int32](c, "target")             // appended within v1
	parents := optCol[*array.List](c, "parent_request_ids") // v2
	// v2.1: generation endpoints.
	mItems, mPartials, jPolls := optCol[*array.Int32](c, "media_items"), optCol[*array.Int32](c, "media_partials"), optCol[*array.Int32](c, "job_polls")
	mBytes, mAudio, mFirst := optCol[*array.Int64](c, "media_bytes"), optCol[*array.Int64](c, "audio_ns"), optCol[*array.Int64](c, "first_media_ns")
	jQueue, jGen, jDown := optCol[*array.Int64](c, "job_queue_ns"), optCol[*array.Int64](c, "job_generation_ns"), optCol[*array.Int64](c, "job_download_ns")
	// records/v2.1.
	accTask, accItem := optCol[*array.String](c, "accuracy_task"), optCol[*array.String](c, "accuracy_item")
	accExp, accAns := optCol[*array.String](c, "accuracy_expected"), optCol[*array.String](c, "accuracy_answer")
	accCorrect := optCol[*array.Boolean](c, "accuracy_correct")
	var parentIDs *array.Int64
	if parents != nil {
		if parentIDs, _ = parents.ListValues().(*array.Int64); parentIDs == nil {
			c.errs = append(c.errs, fmt.Errorf("column parent_request_ids has type %s, want a list of int64", parents.DataType()))
		}
	}
	blocked, dns := colAs[*array.Int64](c, "blocked_ns"), colAs[*array.Int64](c, "dns_ns")
	connect, adapter := colAs[*array.Int64](c, "connect_ns"), colAs[*array.Int64](c, "adapter_ns")
	mcols := readMediaColumns(c) // v2.1
	if len(c.errs) > 0 {
		return out, errors.Join(c.errs...)
	}

	n := int(rec.NumRows())
	out = append(out, make([]record.Request, n)...)
	rows := out[len(out)-n:]
	for i := range rows {
		r := &rows[i]
		r.RequestID = requestID.Value(i)
		r.TraceRow = i64or(traceRow, i, -1)
		r.SessionID = sessionID.at(i)
		r.Turn = turn.Value(i)
		if phase.at(i) == record.PhaseWarmup.String() {
			r.Phase = record.PhaseWarmup
		}
		r.SenderID = senderID.Value(i)
		r.IntendedNS = i64or(times[0], i, 0)
		r.DispatchedNS = i64or(times[1], i, 0)
		r.SentNS = i64or(times[2], i, 0)
		r.WroteNS = i64or(times[3], i, 0)
		r.HeadersNS = i64or(times[4], i, 0)
		r.FirstEventNS = i64or(times[5], i, 0)
		r.FirstTokenNS = i64or(times[6], i, 0)
		r.FirstOutputTokenNS = i64or(times[7], i, 0)
		r.SecondTokenNS = i64or(times[8], i, 0)
		r.LastTokenNS = i64or(times[9], i, 0)
		r.EndNS = i64or(times[10], i, 0)
		r.TTFTNS = i64or(ttft, i, 0)
		r.TTFONS = i64or(ttfo, i, 0)
		r.TTSTNS = i64or(ttst, i, 0)
		if !itl.IsNull(i) {
			r.ITLNS = itl.Value(i)
		}
		r.E2ENS = i64or(e2e, i, 0)
		r.LatenessNS = i64or(lateness, i, 0)
		r.LatencyFromIntendedNS = i64or(fromIntended, i, 0)
		r.SessionDelayNS = sessionDelay.Value(i)
		r.InputTokens = inTok.Value(i)
		r.OutputTokens = outTok.Value(i)
		r.ReasoningTokens = reasTok.Value(i)
		r.MaxTokens = i32or(maxTok, i, 0)
		r.TraceInputTokens = -1
		if traceInTok != nil {
			r.TraceInputTokens = i32or(traceInTok, i, -1)
		}
		if readLag != nil {
			r.ReadLagNS = i64or(readLag, i, 0)
		}
		if src := tokSource.at(i); src != "" {
			for j, v := range tokenSourceValues {
				if v == src {
					r.OutputTokensSource = record.TokenSource(j)
				}
			}
		}
		r.ServerMinusClientOutputTokens = record.NoTokenDiff
		if tokDiff != nil {
			r.ServerMinusClientOutputTokens = i32or(tokDiff, i, record.NoTokenDiff)
		}
		r.ServerExtras = extras.at(i)
		if cancelAfter != nil {
			r.CancelAfterNS = i64or(cancelAfter, i, 0)
		}
		if taskID != nil {
			r.Task = i64or(taskID, i, -1) + 1
		}
		if parentReq != nil {
			r.ReleasedBy = uint64(i64or(parentReq, i, -1) + 1)
		}
		if depth != nil {
			r.Level = i32or(depth, i, -1) + 1
		}
		if target != nil {
			r.Target = target.Value(i)
		}
		if mItems != nil && mPartials != nil && jPolls != nil && mBytes != nil && mAudio != nil && mFirst != nil && jQueue != nil && jGen != nil && jDown != nil {
			r.MediaItems, r.MediaPartials, r.JobPolls = i32or(mItems, i, 0), i32or(mPartials, i, 0), i32or(jPolls, i, 0)
			r.MediaBytes, r.AudioNS, r.FirstMediaNS = i64or(mBytes, i, 0), i64or(mAudio, i, 0), i64or(mFirst, i, 0)
			r.JobQueueNS, r.JobGenerationNS, r.JobDownloadNS = i64or(jQueue, i, 0), i64or(jGen, i, 0), i64or(jDown, i, 0)
		}
		if parents != nil && parents.IsValid(i) {
			if a, b := parents.ValueOffsets(i); b > a {
				r.DependsOn = make([]uint64, b-a)
				for k := range r.DependsOn {
					r.DependsOn[k] = uint64(parentIDs.Value(int(a) + k))
				}
			}
		}
		if accCorrect != nil && accCorrect.IsValid(i) {
			r.Graded, r.AccuracyCorrect = true, accCorrect.Value(i)
			r.AccuracyTask, r.AccuracyItem = nullableStr(accTask, i), nullableStr(accItem, i)
			r.AccuracyExpected, r.AccuracyAnswer = nullableStr(accExp, i), nullableStr(accAns, i)
		}
		mcols.at(i, r)
		r.ServerPromptTokens = i32or(sPrompt, i, -1)
		r.ServerCompletionTokens = i32or(sCompl, i, -1)
		r.ServerReasoningTokens = i32or(sReas, i, -1)
		r.ServerCachedTokens = i32or(sCached, i, -1)
		r.ExpectedCachedTokens = i32or(eCached, i, -1)
		r.Events = events.Value(i)
		r.ContentEvents = contentEvents.Value(i)
		r.Reads = reads.Value(i)
		r.MaxEventsRead = maxPerRead.Value(i)
		r.BytesReceived = bytesRecv.Value(i)
		r.BytesSent = bytesSent.Value(i)
		r.StatusCode = i32or(status, i, 0)
		r.ErrorKind = knownErrorKind(errKind.at(i))
		r.ErrorMessage = errMsg.at(i)
		r.FinishReason = finish.at(i)
		r.ConnReused = connReused.Value(i)
		r.Retries = retries.Value(i)
		if retryErrors != nil {
			r.RetryErrors = strCol{s: retryErrors}.at(i)
		}
		r.BlockedNS = i64or(blocked, i, 0)
		r.DNSNS = i64or(dns, i, 0)
		r.ConnectNS = i64or(connect, i, 0)
		r.AdapterNS = i64or(adapter, i, 0)
	}
	return out, nil
}

func appendEvents(out []record.Event, rec arrow.Record) ([]record.Event, error) {
	if err := checkVersion(rec, EventsVersion); err != nil {
		return out, err
	}
	c := &columns{rec: rec}
	reqID := colAs[*array.Uint64](c, "request_id")
	seq := colAs[*array.Int32](c, "seq")
	timeNS := colAs[*array.Int64](c, "time_ns")
	kind := c.str("kind")
	tokens := colAs[*array.Int32](c, "tokens")
	bytes := colAs[*array.Int32](c, "bytes")
	inRead := colAs[*array.Int32](c, "events_in_read")
	choice := optCol[*array.Int32](c, "choice") // appended within v1
	if len(c.errs) > 0 {
		return out, errors.Join(c.errs...)
	}
	kinds := make(map[string]record.EventKind, len(eventKindValues))
	for i, v := range eventKindValues[:len(eventKindValues)-1] {
		kinds[v] = record.EventKind(i)
	}
	n := int(rec.NumRows())
	for i := 0; i < n; i++ {
		k, ok := kinds[kind.at(i)]
		if !ok {
			k = record.EventKind(len(eventKindValues) - 1)
		}
		ch := int32(-1)
		if choice != nil {
			ch = i32or(choice, i, -1)
		}
		out = append(out, record.Event{
			RequestID: reqID.Value(i), Seq: seq.Value(i), TimeNS: timeNS.Value(i), Kind: k, Choice: ch,
			Tokens: i32or(tokens, i, -1), Bytes: bytes.Value(i), EventsInRead: inRead.Value(i),
		})
	}
	return out, nil
}

// knownErrorKind returns k as an ErrorKind when it is one of the
// dictionary's kinds (or success), else "unknown": a file whose column
// holds other strings (JSON Lines, or a foreign dictionary) reads as the
// writer would have written it.
func knownErrorKind(k string) record.ErrorKind {
	if slices.Contains(errorKindValues, k) {
		return record.ErrorKind(k)
	}
	return record.ErrorKind(errorKindValues[len(errorKindValues)-1])
}

// nullableStr is row i of a (possibly absent) string column, "" for null.
func nullableStr(a *array.String, i int) string {
	if a == nil || a.IsNull(i) {
		return ""
	}
	return a.Value(i)
}
