// Hot path: appendRequest and appendEvent run once per row; allocation tests
// TestAppendRequestAllocs and TestAppendEventAllocs.

package arrowio

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/reprise-bench/reprise/engine/record"
)

// requestBuilder accumulates record.Request rows as Arrow columns, in the
// order of recordsFields. Not safe for concurrent use.
type requestBuilder struct {
	mem    memory.Allocator
	schema *arrow.Schema
	rows   int // rows appended since the last newRecord
	// dataHint is the string bytes of the last row group, reserved up front.
	dataHint int

	requestID *array.Uint64Builder
	traceRow  *array.Int64Builder
	sessionID *array.StringBuilder
	turn      *array.Int32Builder
	phase     *array.Int8Builder
	senderID  *array.Int32Builder
	times     [len(timeCols)]*array.Int64Builder

	ttft, ttfo, ttst          *array.Int64Builder
	itl                       *array.Float64Builder
	e2e, lateness, fromIntend *array.Int64Builder
	sessionDelay              *array.Int64Builder

	inTok, outTok, reasTok, maxTok           *array.Int32Builder
	traceInTok                               *array.Int32Builder
	readLag                                  *array.Int64Builder
	tokSource                                *array.Int8Builder
	tokDiff                                  *array.Int32Builder
	extras                                   *array.StringBuilder
	cancelAfter                              *array.Int64Builder
	taskID, parentReq                        *array.Int64Builder
	depth                                    *array.Int32Builder
	sPrompt, sCompl, sReas, sCached, eCached *array.Int32Builder
	events, contentEvents, reads, maxPerRead *array.Int32Builder
	bytesRecv, bytesSent                     *array.Int64Builder

	status                         *array.Int32Builder
	errKind                        *array.Int8Builder
	errMsg, finish                 *array.StringBuilder
	connReused                     *array.BooleanBuilder
	retries                        *array.Int32Builder
	retryErrors                    *array.StringBuilder
	target                         *array.Int32Builder
	blocked, dns, connect, adapter *array.Int64Builder
	parents                        *array.ListBuilder
	parentIDs                      *array.Int64Builder // parents' values
	// The generation columns (records/v2.1), in schema order.
	mItems, mPartials, jPolls                   *array.Int32Builder
	mBytes, mAudio, mFirst, jQueue, jGen, jDown *array.Int64Builder

	accTask, accItem, accExp, accAns *array.StringBuilder
	accCorrect                       *array.BooleanBuilder

	media mediaBuilders

	phaseDict, errKindDict, tokSourceDict arrow.Array
	errKindIndex                          map[record.ErrorKind]int8
	// unknownKinds counts rows whose ErrorKind is not in errorKindValues.
	unknownKinds int64
}

func newRequestBuilder(mem memory.Allocator) *requestBuilder {
	b := &requestBuilder{mem: mem, schema: RecordsSchema()}
	i64b := func() *array.Int64Builder { return array.NewInt64Builder(mem) }
	i32b := func() *array.Int32Builder { return array.NewInt32Builder(mem) }
	b.requestID = array.NewUint64Builder(mem)
	b.traceRow = i64b()
	b.sessionID = array.NewStringBuilder(mem)
	b.turn = i32b()
	b.phase = array.NewInt8Builder(mem)
	b.senderID = i32b()
	b.target = i32b()
	for i := range b.times {
		b.times[i] = i64b()
	}
	b.ttft, b.ttfo, b.ttst = i64b(), i64b(), i64b()
	b.itl = array.NewFloat64Builder(mem)
	b.e2e, b.lateness, b.fromIntend, b.sessionDelay = i64b(), i64b(), i64b(), i64b()
	b.inTok, b.outTok, b.reasTok, b.maxTok = i32b(), i32b(), i32b(), i32b()
	b.traceInTok = i32b()
	b.readLag = i64b()
	b.tokSource = array.NewInt8Builder(mem)
	b.tokDiff = i32b()
	b.extras = array.NewStringBuilder(mem)
	b.cancelAfter = i64b()
	b.taskID, b.parentReq, b.depth = i64b(), i64b(), i32b()
	b.sPrompt, b.sCompl, b.sReas, b.sCached, b.eCached = i32b(), i32b(), i32b(), i32b(), i32b()
	b.events, b.contentEvents, b.reads, b.maxPerRead = i32b(), i32b(), i32b(), i32b()
	b.bytesRecv, b.bytesSent = i64b(), i64b()
	b.status = i32b()
	b.errKind = array.NewInt8Builder(mem)
	b.errMsg, b.finish = array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	b.connReused = array.NewBooleanBuilder(mem)
	b.retries = i32b()
	b.retryErrors = array.NewStringBuilder(mem)
	b.blocked, b.dns, b.connect, b.adapter = i64b(), i64b(), i64b(), i64b()
	b.parents = array.NewListBuilderWithField(mem, arrow.Field{Name: "item", Type: i64})
	b.parentIDs = b.parents.ValueBuilder().(*array.Int64Builder)
	b.mItems, b.mPartials, b.jPolls = i32b(), i32b(), i32b()
	b.mBytes, b.mAudio, b.mFirst, b.jQueue, b.jGen, b.jDown = i64b(), i64b(), i64b(), i64b(), i64b(), i64b()
	b.accTask, b.accItem, b.accExp, b.accAns = array.NewStringBuilder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem), array.NewStringBuilder(mem)
	b.accCorrect = array.NewBooleanBuilder(mem)
	b.media.init(mem)

	b.phaseDict = stringArray(mem, phaseValues)
	b.errKindDict = stringArray(mem, errorKindValues)
	b.tokSourceDict = stringArray(mem, tokenSourceValues)
	b.errKindIndex = make(map[record.ErrorKind]int8, len(errorKindValues))
	for i, v := range errorKindValues {
		b.errKindIndex[record.ErrorKind(v)] = int8(i)
	}
	return b
}

func stringArray(mem memory.Allocator, vs []string) arrow.Array {
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues(vs, nil)
	return sb.NewArray()
}

// builders lists every builder (for reserve and release).
func (b *requestBuilder) builders() []array.Builder {
	bs := []array.Builder{b.requestID, b.traceRow, b.sessionID, b.turn, b.phase, b.senderID}
	for _, t := range b.times {
		bs = append(bs, t)
	}
	return append(bs, b.ttft, b.ttfo, b.ttst, b.itl, b.e2e, b.lateness, b.fromIntend, b.sessionDelay,
		b.inTok, b.outTok, b.reasTok, b.maxTok, b.sPrompt, b.sCompl, b.sReas, b.sCached, b.eCached,
		b.events, b.contentEvents, b.reads, b.maxPerRead, b.bytesRecv, b.bytesSent,
		b.status, b.errKind, b.errMsg, b.finish, b.connReused, b.retries, b.blocked, b.dns, b.connect, b.adapter,
		b.traceInTok, b.readLag, b.retryErrors, b.tokSource, b.tokDiff, b.extras, b.cancelAfter,
		b.taskID, b.parentReq, b.depth, b.target, b.parents,
		b.mItems, b.mPartials, b.mBytes, b.mAudio, b.mFirst, b.jQueue, b.jGen, b.jDown, b.jPolls,
		b.accTask, b.accItem, b.accExp, b.accAns, b.accCorrect,
		b.media.images, b.media.imageBytes, b.media.imagePixels, b.media.imageSizes, b.media.audios,
		b.media.audioBytes, b.media.audioNS, b.media.videos, b.media.videoBytes)
}

// reserve makes room for n more rows, so appendRequest never allocates.
func (b *requestBuilder) reserve(n int) {
	for _, x := range b.builders() {
		x.Reserve(n)
	}
	if b.dataHint > 0 {
		// Session ids, messages, finish reasons and server extras: split
		// the hint evenly; the builders still grow if a row group needs
		// more.
		for _, s := range []*array.StringBuilder{b.sessionID, b.errMsg, b.finish, b.extras} {
			s.ReserveData(b.dataHint / 4)
		}
	}
}

// appendRequest appends one row. Capacity must have been reserved.
func (b *requestBuilder) appendRequest(r *record.Request) {
	b.appendIdentity(r)
	b.appendTimes(r)
	b.appendTokens(r)
	b.appendResult(r)
	b.appendTransport(r)
	b.appendGeneration(r)
	b.media.append(r)
	b.rows++
}

// appendIdentity appends r's request id, trace row, session, turn,
// phase and sender.
func (b *requestBuilder) appendIdentity(r *record.Request) {
	b.requestID.UnsafeAppend(r.RequestID)
	if r.TraceRow < 0 {
		b.traceRow.UnsafeAppendBoolToBitmap(false)
	} else {
		b.traceRow.UnsafeAppend(r.TraceRow)
	}
	strNZ(b.sessionID, r.SessionID)
	b.turn.UnsafeAppend(r.Turn)
	if r.Phase == record.PhaseWarmup {
		b.phase.UnsafeAppend(1)
	} else {
		b.phase.UnsafeAppend(0)
	}
	b.senderID.UnsafeAppend(r.SenderID)
}

// appendTimes appends r's timeline and the latencies derived from it.
func (b *requestBuilder) appendTimes(r *record.Request) {
	i64NZ(b.times[0], r.IntendedNS)
	i64NZ(b.times[1], r.DispatchedNS)
	i64NZ(b.times[2], r.SentNS)
	i64NZ(b.times[3], r.WroteNS)
	i64NZ(b.times[4], r.HeadersNS)
	i64NZ(b.times[5], r.FirstEventNS)
	i64NZ(b.times[6], r.FirstTokenNS)
	i64NZ(b.times[7], r.FirstOutputTokenNS)
	i64NZ(b.times[8], r.SecondTokenNS)
	i64NZ(b.times[9], r.LastTokenNS)
	i64NZ(b.times[10], r.EndNS)

	i64NZ(b.ttft, r.TTFTNS)
	i64NZ(b.ttfo, r.TTFONS)
	// A second token in the same read as the first is 0 ns after it: a
	// value (the summary counts it), not "no second token"; null is a
	// record with neither a second token nor a time to it.
	if r.SecondTokenNS == 0 && r.TTSTNS == 0 {
		b.ttst.UnsafeAppendBoolToBitmap(false)
	} else {
		b.ttst.UnsafeAppend(r.TTSTNS)
	}
	if r.ITLNS == 0 {
		b.itl.UnsafeAppendBoolToBitmap(false)
	} else {
		b.itl.UnsafeAppend(r.ITLNS)
	}
	i64NZ(b.e2e, r.E2ENS)
	if r.IntendedNS == 0 || r.DispatchedNS == 0 {
		b.lateness.UnsafeAppendBoolToBitmap(false)
	} else {
		b.lateness.UnsafeAppend(r.LatenessNS)
	}
	i64NZ(b.fromIntend, r.LatencyFromIntendedNS)
	b.sessionDelay.UnsafeAppend(r.SessionDelayNS)
}

// appendTokens appends r's token counts, planned cancellation and task
// position.
func (b *requestBuilder) appendTokens(r *record.Request) {
	b.inTok.UnsafeAppend(r.InputTokens)
	b.outTok.UnsafeAppend(r.OutputTokens)
	b.reasTok.UnsafeAppend(r.ReasoningTokens)
	i32NZ(b.maxTok, r.MaxTokens)
	i32Known(b.traceInTok, r.TraceInputTokens)
	i64NZ(b.readLag, r.ReadLagNS)
	if r.OutputTokensSource == record.TokensUnknown || int(r.OutputTokensSource) >= len(tokenSourceValues) {
		b.tokSource.UnsafeAppendBoolToBitmap(false)
	} else {
		b.tokSource.UnsafeAppend(int8(r.OutputTokensSource))
	}
	if r.ServerMinusClientOutputTokens == record.NoTokenDiff {
		b.tokDiff.UnsafeAppendBoolToBitmap(false)
	} else {
		b.tokDiff.UnsafeAppend(r.ServerMinusClientOutputTokens)
	}
	strNZ(b.extras, r.ServerExtras)
	i64NZ(b.cancelAfter, r.CancelAfterNS)
	// 0 (and, defensively, any value no column can hold) is "none": null.
	i64Known(b.taskID, max(r.Task, 0)-1)
	parent := int64(-1)
	if r.ReleasedBy <= math.MaxInt64 {
		parent = int64(r.ReleasedBy) - 1
	}
	i64Known(b.parentReq, parent)
	i32Known(b.depth, max(r.Level, 0)-1)
	i32Known(b.sPrompt, r.ServerPromptTokens)
	i32Known(b.sCompl, r.ServerCompletionTokens)
	i32Known(b.sReas, r.ServerReasoningTokens)
	i32Known(b.sCached, r.ServerCachedTokens)
	i32Known(b.eCached, r.ExpectedCachedTokens)
}

// appendResult appends r's event and byte counts, status, error kind
// (counting the kinds no column value names) and finish reason.
func (b *requestBuilder) appendResult(r *record.Request) {
	b.events.UnsafeAppend(r.Events)
	b.contentEvents.UnsafeAppend(r.ContentEvents)
	b.reads.UnsafeAppend(r.Reads)
	b.maxPerRead.UnsafeAppend(r.MaxEventsRead)
	b.bytesRecv.UnsafeAppend(r.BytesReceived)
	b.bytesSent.UnsafeAppend(r.BytesSent)
	i32NZ(b.status, r.StatusCode)
	if r.ErrorKind == record.ErrNone {
		b.errKind.UnsafeAppendBoolToBitmap(false)
	} else {
		k, ok := b.errKindIndex[r.ErrorKind]
		if !ok {
			k = int8(len(errorKindValues) - 1)
			b.unknownKinds++
		}
		b.errKind.UnsafeAppend(k)
	}
	strNZ(b.errMsg, r.ErrorMessage)
	strNZ(b.finish, r.FinishReason)
}

// appendTransport appends r's connection reuse, retries, connection
// timings, target and the requests it depends on.
func (b *requestBuilder) appendTransport(r *record.Request) {
	b.connReused.UnsafeAppend(r.ConnReused)
	b.retries.UnsafeAppend(r.Retries)
	strNZ(b.retryErrors, r.RetryErrors)
	i64NZ(b.blocked, r.BlockedNS)
	i64NZ(b.dns, r.DNSNS)
	i64NZ(b.connect, r.ConnectNS)
	i64NZ(b.adapter, r.AdapterNS)
	b.target.UnsafeAppend(r.Target)
	if len(r.DependsOn) == 0 {
		b.parents.AppendNull()
	} else {
		b.parents.Append(true)
		for _, id := range r.DependsOn {
			b.parentIDs.Append(int64(id)) // request ids stay far below 2^63
		}
	}
}

// appendGeneration appends r's generation-endpoint media and job
// columns, and its grading (null when it was not graded).
func (b *requestBuilder) appendGeneration(r *record.Request) {
	i32NZ(b.mItems, r.MediaItems)
	i32NZ(b.mPartials, r.MediaPartials)
	i64NZ(b.mBytes, r.MediaBytes)
	i64NZ(b.mAudio, r.AudioNS)
	i64NZ(b.mFirst, r.FirstMediaNS)
	i64NZ(b.jQueue, r.JobQueueNS)
	i64NZ(b.jGen, r.JobGenerationNS)
	i64NZ(b.jDown, r.JobDownloadNS)
	i32NZ(b.jPolls, r.JobPolls)
	if r.Graded {
		strNZ(b.accTask, r.AccuracyTask)
		strNZ(b.accItem, r.AccuracyItem)
		strNZ(b.accExp, r.AccuracyExpected)
		strNZ(b.accAns, r.AccuracyAnswer)
		b.accCorrect.UnsafeAppend(r.AccuracyCorrect)
	} else {
		b.accTask.AppendNull()
		b.accItem.AppendNull()
		b.accExp.AppendNull()
		b.accAns.AppendNull()
		b.accCorrect.UnsafeAppendBoolToBitmap(false)
	}
}

// newRecord returns the rows appended so far as one record (the caller
// releases it) and resets the builders.
func (b *requestBuilder) newRecord() arrow.Record {
	n := b.rows
	b.dataHint = b.sessionID.DataLen() + b.errMsg.DataLen() + b.finish.DataLen() + b.extras.DataLen()
	cols := make([]arrow.Array, 0, b.schema.NumFields())
	cols = append(cols,
		b.requestID.NewArray(), b.traceRow.NewArray(), b.sessionID.NewArray(), b.turn.NewArray(),
		newDict(b.phase, b.phaseDict), b.senderID.NewArray())
	var times [len(timeCols)]arrow.Array
	for i, t := range b.times {
		times[i] = t.NewArray()
		cols = append(cols, times[i])
	}
	for i, c := range timeCols {
		if c.at != "" {
			cols = append(cols, timestampTwin(times[i]))
		}
	}
	cols = append(cols,
		b.ttft.NewArray(), b.ttfo.NewArray(), b.ttst.NewArray(), b.itl.NewArray(),
		b.e2e.NewArray(), b.lateness.NewArray(), b.fromIntend.NewArray(), b.sessionDelay.NewArray(),
		b.inTok.NewArray(), b.outTok.NewArray(), b.reasTok.NewArray(), b.maxTok.NewArray(),
		b.sPrompt.NewArray(), b.sCompl.NewArray(), b.sReas.NewArray(), b.sCached.NewArray(), b.eCached.NewArray(),
		b.events.NewArray(), b.contentEvents.NewArray(), b.reads.NewArray(), b.maxPerRead.NewArray(),
		b.bytesRecv.NewArray(), b.bytesSent.NewArray(),
		b.status.NewArray(), newDict(b.errKind, b.errKindDict), b.errMsg.NewArray(), b.finish.NewArray(),
		b.connReused.NewArray(), b.retries.NewArray(), b.blocked.NewArray(), b.dns.NewArray(), b.connect.NewArray(), b.adapter.NewArray(),
		b.traceInTok.NewArray(), b.readLag.NewArray(), b.retryErrors.NewArray(),
		newDict(b.tokSource, b.tokSourceDict), b.tokDiff.NewArray(), b.extras.NewArray(), b.cancelAfter.NewArray(),
		b.taskID.NewArray(), b.parentReq.NewArray(), b.depth.NewArray(), b.target.NewArray(), b.parents.NewArray(),
		b.mItems.NewArray(), b.mPartials.NewArray(), b.mBytes.NewArray(), b.mAudio.NewArray(), b.mFirst.NewArray(),
		b.jQueue.NewArray(), b.jGen.NewArray(), b.jDown.NewArray(), b.jPolls.NewArray(),
		b.accTask.NewArray(), b.accItem.NewArray(), b.accExp.NewArray(), b.accAns.NewArray(), b.accCorrect.NewArray())
	cols = b.media.arrays(cols)
	rec := array.NewRecord(b.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	b.rows = 0
	return rec
}

func (b *requestBuilder) release() {
	for _, x := range b.builders() {
		x.Release()
	}
	b.phaseDict.Release()
	b.errKindDict.Release()
	b.tokSourceDict.Release()
}

// newDict turns the index builder's contents into a dictionary array over
// the fixed dictionary values.
func newDict(idx *array.Int8Builder, values arrow.Array) arrow.Array {
	ind := idx.NewArray()
	defer ind.Release()
	return array.NewDictionaryArray(enumType, ind, values)
}

// timestampTwin returns a timestamp[ns] array sharing ns's buffers: the
// twin columns cost no building, only encoding.
func timestampTwin(ns arrow.Array) arrow.Array {
	d := ns.Data()
	td := array.NewData(TimestampNS, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	defer td.Release()
	return array.NewTimestampData(td)
}

// eventBuilder accumulates record.Event rows in the order of EventsSchema.
// Not safe for concurrent use.
type eventBuilder struct {
	schema   *arrow.Schema
	rows     int
	reqID    *array.Uint64Builder
	seq      *array.Int32Builder
	timeNS   *array.Int64Builder
	kind     *array.Int8Builder
	tokens   *array.Int32Builder
	bytes    *array.Int32Builder
	inRead   *array.Int32Builder
	choice   *array.Int32Builder
	kindDict arrow.Array
}

func newEventBuilder(mem memory.Allocator) *eventBuilder {
	return &eventBuilder{
		schema:   EventsSchema(),
		reqID:    array.NewUint64Builder(mem),
		seq:      array.NewInt32Builder(mem),
		timeNS:   array.NewInt64Builder(mem),
		kind:     array.NewInt8Builder(mem),
		tokens:   array.NewInt32Builder(mem),
		bytes:    array.NewInt32Builder(mem),
		inRead:   array.NewInt32Builder(mem),
		choice:   array.NewInt32Builder(mem),
		kindDict: stringArray(mem, eventKindValues),
	}
}

func (b *eventBuilder) builders() []array.Builder {
	return []array.Builder{b.reqID, b.seq, b.timeNS, b.kind, b.tokens, b.bytes, b.inRead, b.choice}
}

func (b *eventBuilder) reserve(n int) {
	for _, x := range b.builders() {
		x.Reserve(n)
	}
}

// appendEvent appends one row. Capacity must have been reserved.
func (b *eventBuilder) appendEvent(e *record.Event) {
	b.reqID.UnsafeAppend(e.RequestID)
	b.seq.UnsafeAppend(e.Seq)
	b.timeNS.UnsafeAppend(e.TimeNS)
	k := int8(e.Kind)
	if int(e.Kind) >= len(eventKindValues)-1 {
		k = int8(len(eventKindValues) - 1)
	}
	b.kind.UnsafeAppend(k)
	i32Known(b.tokens, e.Tokens)
	b.bytes.UnsafeAppend(e.Bytes)
	b.inRead.UnsafeAppend(e.EventsInRead)
	i32Known(b.choice, e.Choice)
	b.rows++
}

func (b *eventBuilder) newRecord() arrow.Record {
	t := b.timeNS.NewArray()
	cols := []arrow.Array{b.reqID.NewArray(), b.seq.NewArray(), t, timestampTwin(t),
		newDict(b.kind, b.kindDict), b.tokens.NewArray(), b.bytes.NewArray(), b.inRead.NewArray(), b.choice.NewArray()}
	rec := array.NewRecord(b.schema, cols, int64(b.rows))
	for _, c := range cols {
		c.Release()
	}
	b.rows = 0
	return rec
}

func (b *eventBuilder) release() {
	for _, x := range b.builders() {
		x.Release()
	}
	b.kindDict.Release()
}
