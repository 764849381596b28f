package arrowio

import (
	"sync"

	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// zstdLevel is the zstd level of Parquet pages and Arrow IPC buffers: 1
// ("fastest"). After delta encoding the columns are small already; higher
// levels cost several times the CPU for a few percent.
const zstdLevel = 1

// pooledZstd replaces arrow v17's Parquet zstd codec, whose EncodeLevel
// builds a new encoder (≈1–8 MB of tables) for every page: writing a
// million requests allocated 8 GB that way. It keeps encoders in a pool per
// level and delegates everything else to the original codec. Registering
// it is process-wide; it only changes speed, never the bytes' meaning.
type pooledZstd struct {
	compress.Codec // the original, for decoding and streams
}

var zstdPools sync.Map // zstd.EncoderLevel → *sync.Pool of *zstd.Encoder

func zstdEncoder(level zstd.EncoderLevel) (*zstd.Encoder, *sync.Pool) {
	p, ok := zstdPools.Load(level)
	if !ok {
		p, _ = zstdPools.LoadOrStore(level, &sync.Pool{New: func() any {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithZeroFrames(true),
				zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
			if err != nil {
				panic("BUG: zstd encoder options: " + err.Error())
			}
			return enc
		}})
	}
	pool := p.(*sync.Pool)
	return pool.Get().(*zstd.Encoder), pool
}

func (z pooledZstd) Encode(dst, src []byte) []byte {
	return z.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (z pooledZstd) EncodeLevel(dst, src []byte, level int) []byte {
	l := zstd.SpeedDefault
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	enc, pool := zstdEncoder(l)
	defer pool.Put(enc)
	return enc.EncodeAll(src, dst[:0])
}

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic("BUG: arrow has no zstd codec: " + err.Error())
	}
	compress.RegisterCodec(compress.Codecs.Zstd, pooledZstd{orig})
}
