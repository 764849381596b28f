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

// appendRequests appends the rows of a records file's record to out; a
// column it lacks or of the wrong type is an error, returned with out as
// it was.
func appendRequests(out []record.Request, rec arrow.Record) ([]record.Request, error) {
	if err := checkVersion(rec, RecordsVersion, olderRecordsVersions...); err != nil {
		return out, err
	}
	c := &columns{rec: rec}
	var rc requestColumns
	rc.read(c)
	if len(c.errs) > 0 {
		return out, errors.Join(c.errs...)
	}

	n := int(rec.NumRows())
	out = append(out, make([]record.Request, n)...)
	rows := out[len(out)-n:]
	for i := range rows {
		r := &rows[i]
		rc.timesAt(i, r)
		rc.tokensAt(i, r)
		rc.extrasAt(i, r)
		rc.resultAt(i, r)
	}
	return out, nil
}

// requestColumns are the columns of a records file, typed. Optional
// columns (added within a version, or by a later one) are nil when the
// file predates them.
type requestColumns struct {
	requestID                                   *array.Uint64
	traceRow                                    *array.Int64
	sessionID, phase                            strCol
	turn, senderID                              *array.Int32
	times                                       [len(timeCols)]*array.Int64
	ttft, ttfo, ttst                            *array.Int64
	itl                                         *array.Float64
	e2e, lateness, fromIntended, sessionDelay   *array.Int64
	inTok, outTok, reasTok, maxTok              *array.Int32
	sPrompt, sCompl, sReas, sCached, eCached    *array.Int32
	traceInTok                                  *array.Int32
	readLag                                     *array.Int64
	tokSource, extras                           strCol
	tokDiff                                     *array.Int32
	cancelAfter, taskID, parentReq              *array.Int64
	depth                                       *array.Int32
	events, contentEvents, reads, maxPerRead    *array.Int32
	bytesRecv, bytesSent                        *array.Int64
	status                                      *array.Int32
	errKind, errMsg, finish                     strCol
	connReused                                  *array.Boolean
	retries                                     *array.Int32
	retryErrors                                 *array.String
	target                                      *array.Int32
	parents                                     *array.List
	parentIDs                                   *array.Int64
	mItems, mPartials, jPolls                   *array.Int32
	mBytes, mAudio, mFirst, jQueue, jGen, jDown *array.Int64
	accTask, accItem, accExp, accAns            *array.String
	accCorrect                                  *array.Boolean
	blocked, dns, connect, adapter              *array.Int64
	media                                       mediaColumns
}

// read looks the columns up in c's record; what is missing or of the
// wrong type is in c.errs.
func (rc *requestColumns) read(c *columns) {
	rc.requestID = colAs[*array.Uint64](c, "request_id")
	rc.traceRow = colAs[*array.Int64](c, "trace_row")
	rc.sessionID = c.str("session_id")
	rc.turn = colAs[*array.Int32](c, "turn")
	rc.phase = c.str("phase")
	rc.senderID = colAs[*array.Int32](c, "sender_id")
	for i, tc := range timeCols {
		rc.times[i] = colAs[*array.Int64](c, tc.ns)
	}
	rc.ttft, rc.ttfo, rc.ttst = colAs[*array.Int64](c, "ttft_ns"), colAs[*array.Int64](c, "ttfo_ns"), colAs[*array.Int64](c, "ttst_ns")
	rc.itl = colAs[*array.Float64](c, "itl_ns")
	rc.e2e, rc.lateness = colAs[*array.Int64](c, "e2e_ns"), colAs[*array.Int64](c, "lateness_ns")
	rc.fromIntended, rc.sessionDelay = colAs[*array.Int64](c, "latency_from_intended_ns"), colAs[*array.Int64](c, "session_delay_ns")
	rc.inTok, rc.outTok = colAs[*array.Int32](c, "input_tokens"), colAs[*array.Int32](c, "output_tokens")
	rc.reasTok, rc.maxTok = colAs[*array.Int32](c, "reasoning_tokens"), colAs[*array.Int32](c, "max_tokens")
	rc.sPrompt, rc.sCompl = colAs[*array.Int32](c, "server_prompt_tokens"), colAs[*array.Int32](c, "server_completion_tokens")
	rc.sReas, rc.sCached = colAs[*array.Int32](c, "server_reasoning_tokens"), colAs[*array.Int32](c, "server_cached_tokens")
	rc.eCached = colAs[*array.Int32](c, "expected_cached_tokens")
	rc.traceInTok = optCol[*array.Int32](c, "trace_input_tokens") // appended within v1
	rc.readLag = optCol[*array.Int64](c, "read_lag_ns")           // appended within v1
	rc.tokSource = c.optStr("output_tokens_source")               // appended within v1
	rc.tokDiff = optCol[*array.Int32](c, "server_minus_client_output_tokens")
	rc.extras = c.optStr("server_extras")
	rc.cancelAfter = optCol[*array.Int64](c, "cancel_after_ns") // appended within v1
	rc.taskID, rc.parentReq = optCol[*array.Int64](c, "task_id"), optCol[*array.Int64](c, "parent_request_id")
	rc.depth = optCol[*array.Int32](c, "depth")
	rc.events, rc.contentEvents = colAs[*array.Int32](c, "events"), colAs[*array.Int32](c, "content_events")
	rc.reads, rc.maxPerRead = colAs[*array.Int32](c, "reads"), colAs[*array.Int32](c, "max_events_per_read")
	rc.bytesRecv, rc.bytesSent = colAs[*array.Int64](c, "bytes_received"), colAs[*array.Int64](c, "bytes_sent")
	rc.status = colAs[*array.Int32](c, "status_code")
	rc.errKind, rc.errMsg, rc.finish = c.str("error_kind"), c.str("error_message"), c.str("finish_reason")
	rc.connReused = colAs[*array.Boolean](c, "conn_reused")
	rc.retries = colAs[*array.Int32](c, "retries")
	rc.retryErrors = optCol[*array.String](c, "retry_errors") // appended within v1
	rc.target = optCol[*array.Int32](c, "target")             // appended within v1
	rc.parents = optCol[*array.List](c, "parent_request_ids") // v2
	// v2.1: generation endpoints.
	rc.mItems, rc.mPartials, rc.jPolls = optCol[*array.Int32](c, "media_items"), optCol[*array.Int32](c, "media_partials"), optCol[*array.Int32](c, "job_polls")
	rc.mBytes, rc.mAudio, rc.mFirst = optCol[*array.Int64](c, "media_bytes"), optCol[*array.Int64](c, "audio_ns"), optCol[*array.Int64](c, "first_media_ns")
	rc.jQueue, rc.jGen, rc.jDown = optCol[*array.Int64](c, "job_queue_ns"), optCol[*array.Int64](c, "job_generation_ns"), optCol[*array.Int64](c, "job_download_ns")
	// records/v2.1.
	rc.accTask, rc.accItem = optCol[*array.String](c, "accuracy_task"), optCol[*array.String](c, "accuracy_item")
	rc.accExp, rc.accAns = optCol[*array.String](c, "accuracy_expected"), optCol[*array.String](c, "accuracy_answer")
	rc.accCorrect = optCol[*array.Boolean](c, "accuracy_correct")
	if rc.parents != nil {
		if rc.parentIDs, _ = rc.parents.ListValues().(*array.Int64); rc.parentIDs == nil {
			c.errs = append(c.errs, fmt.Errorf("column parent_request_ids has type %s, want a list of int64", rc.parents.DataType()))
		}
	}
	rc.blocked, rc.dns = colAs[*array.Int64](c, "blocked_ns"), colAs[*array.Int64](c, "dns_ns")
	rc.connect, rc.adapter = colAs[*array.Int64](c, "connect_ns"), colAs[*array.Int64](c, "adapter_ns")
	rc.media = readMediaColumns(c) // v2.1
}

// timesAt reads row i's identity, timeline and latencies into r.
func (rc *requestColumns) timesAt(i int, r *record.Request) {
	r.RequestID = rc.requestID.Value(i)
	r.TraceRow = i64or(rc.traceRow, i, -1)
	r.SessionID = rc.sessionID.at(i)
	r.Turn = rc.turn.Value(i)
	if rc.phase.at(i) == record.PhaseWarmup.String() {
		r.Phase = record.PhaseWarmup
	}
	r.SenderID = rc.senderID.Value(i)
	r.IntendedNS = i64or(rc.times[0], i, 0)
	r.DispatchedNS = i64or(rc.times[1], i, 0)
	r.SentNS = i64or(rc.times[2], i, 0)
	r.WroteNS = i64or(rc.times[3], i, 0)
	r.HeadersNS = i64or(rc.times[4], i, 0)
	r.FirstEventNS = i64or(rc.times[5], i, 0)
	r.FirstTokenNS = i64or(rc.times[6], i, 0)
	r.FirstOutputTokenNS = i64or(rc.times[7], i, 0)
	r.SecondTokenNS = i64or(rc.times[8], i, 0)
	r.LastTokenNS = i64or(rc.times[9], i, 0)
	r.EndNS = i64or(rc.times[10], i, 0)
	r.TTFTNS = i64or(rc.ttft, i, 0)
	r.TTFONS = i64or(rc.ttfo, i, 0)
	r.TTSTNS = i64or(rc.ttst, i, 0)
	if !rc.itl.IsNull(i) {
		r.ITLNS = rc.itl.Value(i)
	}
	r.E2ENS = i64or(rc.e2e, i, 0)
	r.LatenessNS = i64or(rc.lateness, i, 0)
	r.LatencyFromIntendedNS = i64or(rc.fromIntended, i, 0)
	r.SessionDelayNS = rc.sessionDelay.Value(i)
}

// tokensAt reads row i's token counts, read lag, server extras, planned
// cancellation, task position and target into r; an optional column the
// file lacks leaves its field at the "none" value.
func (rc *requestColumns) tokensAt(i int, r *record.Request) {
	r.InputTokens = rc.inTok.Value(i)
	r.OutputTokens = rc.outTok.Value(i)
	r.ReasoningTokens = rc.reasTok.Value(i)
	r.MaxTokens = i32or(rc.maxTok, i, 0)
	r.TraceInputTokens = -1
	if rc.traceInTok != nil {
		r.TraceInputTokens = i32or(rc.traceInTok, i, -1)
	}
	if rc.readLag != nil {
		r.ReadLagNS = i64or(rc.readLag, i, 0)
	}
	if src := rc.tokSource.at(i); src != "" {
		for j, v := range tokenSourceValues {
			if v == src {
				r.OutputTokensSource = record.TokenSource(j)
			}
		}
	}
	r.ServerMinusClientOutputTokens = record.NoTokenDiff
	if rc.tokDiff != nil {
		r.ServerMinusClientOutputTokens = i32or(rc.tokDiff, i, record.NoTokenDiff)
	}
	r.ServerExtras = rc.extras.at(i)
	if rc.cancelAfter != nil {
		r.CancelAfterNS = i64or(rc.cancelAfter, i, 0)
	}
	if rc.taskID != nil {
		r.Task = i64or(rc.taskID, i, -1) + 1
	}
	if rc.parentReq != nil {
		r.ReleasedBy = uint64(i64or(rc.parentReq, i, -1) + 1)
	}
	if rc.depth != nil {
		r.Level = i32or(rc.depth, i, -1) + 1
	}
	if rc.target != nil {
		r.Target = rc.target.Value(i)
	}
}

// extrasAt reads row i's generation-endpoint media and job columns, the
// requests it depends on, its grading and its input media into r.
func (rc *requestColumns) extrasAt(i int, r *record.Request) {
	if rc.mItems != nil && rc.mPartials != nil && rc.jPolls != nil && rc.mBytes != nil && rc.mAudio != nil && rc.mFirst != nil && rc.jQueue != nil && rc.jGen != nil && rc.jDown != nil {
		r.MediaItems, r.MediaPartials, r.JobPolls = i32or(rc.mItems, i, 0), i32or(rc.mPartials, i, 0), i32or(rc.jPolls, i, 0)
		r.MediaBytes, r.AudioNS, r.FirstMediaNS = i64or(rc.mBytes, i, 0), i64or(rc.mAudio, i, 0), i64or(rc.mFirst, i, 0)
		r.JobQueueNS, r.JobGenerationNS, r.JobDownloadNS = i64or(rc.jQueue, i, 0), i64or(rc.jGen, i, 0), i64or(rc.jDown, i, 0)
	}
	if rc.parents != nil && rc.parents.IsValid(i) {
		if a, b := rc.parents.ValueOffsets(i); b > a {
			r.DependsOn = make([]uint64, b-a)
			for k := range r.DependsOn {
				r.DependsOn[k] = uint64(rc.parentIDs.Value(int(a) + k))
			}
		}
	}
	if rc.accCorrect != nil && rc.accCorrect.IsValid(i) {
		r.Graded, r.AccuracyCorrect = true, rc.accCorrect.Value(i)
		r.AccuracyTask, r.AccuracyItem = nullableStr(rc.accTask, i), nullableStr(rc.accItem, i)
		r.AccuracyExpected, r.AccuracyAnswer = nullableStr(rc.accExp, i), nullableStr(rc.accAns, i)
	}
	rc.media.at(i, r)
}

// resultAt reads row i's server token counts, event and byte counts,
// status, error, finish reason, connection and retries into r.
func (rc *requestColumns) resultAt(i int, r *record.Request) {
	r.ServerPromptTokens = i32or(rc.sPrompt, i, -1)
	r.ServerCompletionTokens = i32or(rc.sCompl, i, -1)
	r.ServerReasoningTokens = i32or(rc.sReas, i, -1)
	r.ServerCachedTokens = i32or(rc.sCached, i, -1)
	r.ExpectedCachedTokens = i32or(rc.eCached, i, -1)
	r.Events = rc.events.Value(i)
	r.ContentEvents = rc.contentEvents.Value(i)
	r.Reads = rc.reads.Value(i)
	r.MaxEventsRead = rc.maxPerRead.Value(i)
	r.BytesReceived = rc.bytesRecv.Value(i)
	r.BytesSent = rc.bytesSent.Value(i)
	r.StatusCode = i32or(rc.status, i, 0)
	r.ErrorKind = knownErrorKind(rc.errKind.at(i))
	r.ErrorMessage = rc.errMsg.at(i)
	r.FinishReason = rc.finish.at(i)
	r.ConnReused = rc.connReused.Value(i)
	r.Retries = rc.retries.Value(i)
	if rc.retryErrors != nil {
		r.RetryErrors = strCol{s: rc.retryErrors}.at(i)
	}
	r.BlockedNS = i64or(rc.blocked, i, 0)
	r.DNSNS = i64or(rc.dns, i, 0)
	r.ConnectNS = i64or(rc.connect, i, 0)
	r.AdapterNS = i64or(rc.adapter, i, 0)
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

// errStop ends a table read when the iterator's consumer stops early.
var errStop = errors.New("stop")

// tableRows iterates over the rows of table, converting one record batch
// at a time into a reused slice.
// Before each batch it calls cancelled, nil or a context's Err, and ends
// with its error.
func tableRows[T any](cancelled func() error, dir, table string, conv func([]T, arrow.Record) ([]T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var batch []T
		err := ReadTable(dir, table, func(path string, rec arrow.Record) error {
			if cancelled != nil {
				if err := cancelled(); err != nil {
					return fmt.Errorf("read %s: %w", path, err)
				}
			}
			var err error
			if batch, err = conv(batch[:0], rec); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			for i := range batch {
				if !yield(batch[i], nil) {
					return errStop
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			var zero T
			yield(zero, err)
		}
	}
}

// isPartName reports whether name is a part file's name (part-00012.parquet).
func isPartName(name string) bool {
	rest, ok := strings.CutPrefix(name, "part-")
	if !ok {
		return false
	}
	for _, f := range allFormats {
		if num, ok := strings.CutSuffix(rest, f.Ext()); ok && num != "" && strings.Trim(num, "0123456789") == "" {
			return true
		}
	}
	return false
}
