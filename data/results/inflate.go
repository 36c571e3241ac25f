package results

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"

	"github.com/specsim/specsim/sim"
)

// ErrBomb is wrapped by CheckPages' error for a page whose compressed
// data expands to more than its header declares (a decompression bomb,
// or a damaged file): the decoders trust that size for their budget, so
// the page is refused before they run.
var ErrBomb = errors.New("page expands beyond its declared size")

// bombError is a page that expands beyond its declared size: it matches
// ErrBomb and sim.ErrMemBudget (a usage error for a front end: exit 2).
type bombError struct{ msg string }

func (e bombError) Error() string   { return e.msg }
func (e bombError) Unwrap() []error { return []error{ErrBomb, sim.ErrMemBudget} }

// maxZstdWindow bounds the window a zstd frame of a page may ask the
// measuring decoder for beyond the page's declared size (a frame written
// in one piece has a window of its content size).
const maxZstdWindow = 8 << 20

// checkInflate decompresses the payload of a page (at off in r, of the
// sizes hdr declares) with codec, counting the bytes the decompressor
// actually produces and stopping one byte past the uncompressed size the
// header declares: a page that expands further is an error wrapping
// ErrBomb, whatever its header or its codec's own framing says. A zstd
// frame must also declare (its content size, which parquet-go's decoder
// allocates at once) no more than the page. Memory: the compressed
// payload, and for zstd a window of at most max(declared, 8 MiB).
func checkInflate(r io.ReaderAt, off int64, hdr *format.PageHeader, codec format.CompressionCodec) error {
	comp, declared := int64(hdr.CompressedPageSize), int64(hdr.UncompressedPageSize)
	if v2 := hdr.DataPageHeaderV2; v2.Valid {
		levels := int64(v2.V.RepetitionLevelsByteLength) + int64(v2.V.DefinitionLevelsByteLength)
		if levels < 0 || levels > comp || levels > declared {
			return fmt.Errorf("levels of %d bytes do not fit the page's %d/%d bytes", levels, comp, declared)
		}
		if c, ok := v2.V.IsCompressed.Get(); ok && !c {
			return nil // stored as is: decoding takes the compressed size
		}
		off, comp, declared = off+levels, comp-levels, declared-levels
	}
	if codec == format.Uncompressed || comp == 0 {
		return nil
	}
	src := make([]byte, comp)
	if _, err := r.ReadAt(src, off); err != nil {
		return err
	}
	got, err := inflated(src, declared, codec)
	if errors.Is(err, ErrBomb) {
		return err
	}
	if err != nil {
		return fmt.Errorf("%v data that does not decompress (%v)", codec, err)
	}
	if got > declared {
		return bombError{fmt.Sprintf("a decompression bomb: %d bytes of %v data expand to more than the %d bytes its header declares (decompression stopped at %d); the file is damaged or hostile", comp, codec, declared, got)}
	}
	return nil
}

// inflated returns how many bytes src decompresses to under codec,
// counting at most declared+1 of them; codecs parquet-go cannot decode
// are left to its own error (0, nil).
func inflated(src []byte, declared int64, codec format.CompressionCodec) (int64, error) {
	limit := declared + 1
	count := func(rd io.Reader) (int64, error) { return io.Copy(io.Discard, io.LimitReader(rd, limit)) }
	switch codec {
	case format.Snappy:
		n, err := snappy.DecodedLen(src) // the size snappy.Decode allocates and must produce
		return int64(n), err
	case format.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return 0, err
		}
		return count(zr)
	case format.Brotli:
		return count(brotli.NewReader(bytes.NewReader(src)))
	case format.Lz4Raw:
		dst := make([]byte, declared)
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil {
			// parquet-go doubles its buffer on any error, for ever
			return limit, nil
		}
		return int64(n), nil
	case format.Zstd:
		if err := zstdFrames(src, declared); err != nil {
			return limit, err
		}
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(uint64(max(declared, maxZstdWindow))))
		if err != nil {
			return 0, err
		}
		defer d.Close()
		return count(d)
	}
	return 0, nil
}

// zstdFrames walks the zstd frames of src (headers and block headers, no
// decoding) and returns an error wrapping ErrBomb if a frame declares a
// content size above declared: parquet-go's decoder allocates that size
// before it decodes a byte.
func zstdFrames(src []byte, declared int64) error {
	for p := 0; p < len(src); {
		var h zstd.Header
		if err := h.Decode(src[p:]); err != nil {
			return err
		}
		if h.Skippable {
			p += h.HeaderSize + int(h.SkippableSize)
			continue
		}
		if h.HasFCS && h.FrameContentSize > uint64(declared) {
			return bombError{fmt.Sprintf("a decompression bomb: a zstd frame declares %d bytes, its page %d", h.FrameContentSize, declared)}
		}
		p += h.HeaderSize
		for last := false; !last; {
			if p+3 > len(src) {
				return io.ErrUnexpectedEOF
			}
			bh := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
			typ, size := (bh>>1)&3, int(bh>>3)
			last = bh&1 == 1
			p += 3
			switch typ {
			case 1: // RLE: one byte repeated size times
				p++
			case 3:
				return errors.New("a reserved zstd block type")
			default:
				p += size
			}
		}
		if h.HasCheckSum {
			p += 4
		}
	}
	return nil
}
