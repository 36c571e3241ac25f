package results

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/specsim/specsim/sim"
)

// The budgeted decoder of Parquet. parquet-go trusts the sizes a file
// declares: a list length in the footer's Thrift becomes one allocation
// of that many elements, a binary length in a page header one of that
// many bytes, and a page's value count (a 14.7 KB zstd page can declare
// 2e7 floats) becomes gigabytes of decoded values, all before anything
// can be checked. So before parquet-go opens a file, CheckFrame walks the
// footer's Thrift without allocating (skimThrift: every length must fit
// in the bytes that remain, nesting is bounded), and before it reads rows,
// CheckPages walks every page header of every column chunk the same way
// and checks what each page will cost to decode against the memory
// budget.

// MaxFooterBytes bounds a Parquet footer (the file's metadata): a few
// kilobytes for the files this project writes.
const MaxFooterBytes = 16 << 20

// maxPageHeader bounds a page header's Thrift (statistics included).
const maxPageHeader = 1 << 20

// maxThriftDepth bounds the nesting of Thrift structures (a Parquet footer
// nests about six deep).
const maxThriftDepth = 32

// DecodeCostPerValue is the memory parquet-go's readers take per value
// of a page they decode (measured: 2e7 float32 values took 2.2 GB, about
// 110 bytes each, in the generic row reader), with a margin.
const DecodeCostPerValue = 128

// errThrift is a malformed Thrift structure.
var errThrift = errors.New("malformed thrift metadata")

// skimThrift walks one Thrift compact-protocol struct at the start of b
// without allocating and returns its length in bytes. Every binary,
// list, set and map length must fit in the bytes that remain (each
// element takes at least one byte), and structs nest at most
// maxThriftDepth deep, so the walk is linear in len(b) and a declared
// size can never exceed the data.
func skimThrift(b []byte) (int, error) {
	s := skimmer{b: b}
	if err := s.value(12, 0); err != nil {
		return 0, err
	}
	return s.i, nil
}

type skimmer struct {
	b []byte
	i int
}

func (s *skimmer) byte() (byte, error) {
	if s.i >= len(s.b) {
		return 0, io.ErrUnexpectedEOF
	}
	c := s.b[s.i]
	s.i++
	return c, nil
}

func (s *skimmer) uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b[s.i:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at byte %d", errThrift, s.i)
	}
	s.i += n
	return v, nil
}

// size reads a length and checks that n elements of at least min bytes
// each fit in what remains.
func (s *skimmer) size(n uint64, min int) (int, error) {
	if n > uint64(len(s.b)-s.i)/uint64(min) {
		return 0, fmt.Errorf("%w: a length of %d at byte %d exceeds the %d bytes left", errThrift, n, s.i, len(s.b)-s.i)
	}
	return int(n), nil
}

// value skips one value of compact type t.
func (s *skimmer) value(t byte, depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("%w: nested deeper than %d", errThrift, maxThriftDepth)
	}
	switch t {
	case 1, 2: // bool in a field header: no payload
		return nil
	case 3: // i8
		_, err := s.byte()
		return err
	case 4, 5, 6: // i16, i32, i64: zigzag varints
		_, err := s.uvarint()
		return err
	case 7: // double
		if _, err := s.size(8, 1); err != nil {
			return err
		}
		s.i += 8
		return nil
	case 8: // binary
		n, err := s.uvarint()
		if err != nil {
			return err
		}
		k, err := s.size(n, 1)
		if err != nil {
			return err
		}
		s.i += k
		return nil
	case 9, 10: // list, set
		return s.list(depth)
	case 11: // map
		return s.mapValue(depth)
	case 12: // struct: field headers until STOP
		return s.structValue(depth)
	}
	return fmt.Errorf("%w: unknown type %d at byte %d", errThrift, t, s.i)
}

// element skips an element of type et of a list, set or map at depth:
// a bool there takes a byte, unlike a bool in a field header.
func (s *skimmer) element(et byte, depth int) error {
	if et == 1 || et == 2 {
		_, err := s.byte()
		return err
	}
	return s.value(et, depth+1)
}

// list skips a list or set at depth: its size and type header, then its
// elements.
func (s *skimmer) list(depth int) error {
	h, err := s.byte()
	if err != nil {
		return err
	}
	n := uint64(h >> 4)
	if n == 15 {
		if n, err = s.uvarint(); err != nil {
			return err
		}
	}
	k, err := s.size(n, 1)
	if err != nil {
		return err
	}
	for range k {
		if err := s.element(h&0x0f, depth); err != nil {
			return err
		}
	}
	return nil
}

// mapValue skips a map at depth: its size, its key and value types (none
// when it is empty), then its pairs.
func (s *skimmer) mapValue(depth int) error {
	n, err := s.uvarint()
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	kv, err := s.byte()
	if err != nil {
		return err
	}
	k, err := s.size(n, 2)
	if err != nil {
		return err
	}
	for range k {
		for _, et := range []byte{kv >> 4, kv & 0x0f} {
			if err := s.element(et, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// structValue skips a struct at depth: field headers (short or long form)
// and their values until STOP.
func (s *skimmer) structValue(depth int) error {
	for {
		h, err := s.byte()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		if h>>4 == 0 { // long form: the field id follows
			if _, err := s.uvarint(); err != nil {
				return err
			}
		}
		if err := s.value(h&0x0f, depth+1); err != nil {
			return err
		}
	}
}

// checkFooter reads the footer of a file whose frame CheckFrame checked
// (n bytes before the last 8) and skims its Thrift.
func checkFooter(r io.ReaderAt, size int64, n int64) error {
	if n > MaxFooterBytes {
		return fmt.Errorf("not a readable parquet file: a footer of %d bytes (at most %d)", n, MaxFooterBytes)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, size-8-n); err != nil {
		return fmt.Errorf("not a readable parquet file: %w", err)
	}
	used, err := skimThrift(b)
	if err != nil {
		return fmt.Errorf("not a readable parquet file: footer: %v", err)
	}
	if used != len(b) {
		return fmt.Errorf("not a readable parquet file: the footer's metadata ends %d bytes before the footer does", len(b)-used)
	}
	return nil
}

// CheckPages walks the page headers of every column chunk of a file whose
// metadata is md (each header skimmed as the footer is, then decoded) and
// returns an error if a chunk or page lies outside the file, a header is
// malformed, or decoding one page would take more than budget bytes
// (sim.DefaultMemBudget for 0): its uncompressed size plus
// DecodeCostPerValue per value it declares (an error wrapping
// sim.ErrMemBudget). Each compressed page is decompressed once, counting
// the bytes it actually produces (checkInflate), so a page that expands
// beyond the size its header declares is refused (ErrBomb, also wrapping
// sim.ErrMemBudget) before a decoder trusts that size.
func CheckPages(r io.ReaderAt, size int64, md *format.FileMetaData, budget int64) error {
	if budget == 0 {
		budget = sim.DefaultMemBudget
	}
	buf := make([]byte, 64<<10)
	var hdr format.PageHeader
	proto := thrift.CompactProtocol{}
	for gi, rg := range md.RowGroups {
		for ci, cc := range rg.Columns {
			m := cc.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			end := start + m.TotalCompressedSize
			where := fmt.Sprintf("row group %d, column %d", gi, ci)
			if start < 4 || m.TotalCompressedSize < 0 || end > size-8 || end < start {
				return fmt.Errorf("not a readable parquet file: %s spans bytes [%d, %d) of a %d-byte file", where, start, end, size)
			}
			var values int64
			for pos := start; pos < end; {
				k := min(int64(len(buf)), end-pos, maxPageHeader)
				if int64(cap(buf)) < k {
					buf = make([]byte, k)
				}
				b := buf[:k]
				if _, err := r.ReadAt(b, pos); err != nil && !errors.Is(err, io.EOF) {
					return fmt.Errorf("not a readable parquet file: %s: %w", where, err)
				}
				n, err := skimThrift(b)
				if err != nil && k < end-pos && k < maxPageHeader {
					// a header longer than the window: read up to the limit
					buf = make([]byte, min(end-pos, maxPageHeader))
					continue
				}
				if err != nil {
					return fmt.Errorf("not a readable parquet file: %s, page at byte %d: %v", where, pos, err)
				}
				hdr = format.PageHeader{}
				if err := thrift.NewDecoder(proto.NewReaderFromBytes(b[:n])).Decode(&hdr); err != nil {
					return fmt.Errorf("not a readable parquet file: %s, page at byte %d: %v", where, pos, err)
				}
				nv, data := int64(0), true
				switch {
				case hdr.DataPageHeader.Valid:
					nv = int64(hdr.DataPageHeader.V.NumValues)
				case hdr.DataPageHeaderV2.Valid:
					nv = int64(hdr.DataPageHeaderV2.V.NumValues)
				case hdr.DictionaryPageHeader.Valid:
					nv, data = int64(hdr.DictionaryPageHeader.V.NumValues), false
				}
				if hdr.CompressedPageSize < 0 || hdr.UncompressedPageSize < 0 || nv < 0 || int64(hdr.CompressedPageSize) > end-pos-int64(n) {
					return fmt.Errorf("not a readable parquet file: %s, page at byte %d: sizes %d/%d and %d values do not fit the chunk", where, pos, hdr.CompressedPageSize, hdr.UncompressedPageSize, nv)
				}
				what := fmt.Sprintf("%s: a page of %d values (%s uncompressed) to decode", where, nv, sim.FormatBytes(int64(hdr.UncompressedPageSize)))
				if err := sim.CheckMem(what, int64(hdr.UncompressedPageSize)+nv*DecodeCostPerValue, budget, "the file is damaged or was not written by this program"); err != nil {
					return err
				}
				if err := checkInflate(r, pos+int64(n), &hdr, m.Codec); err != nil {
					if errors.Is(err, ErrBomb) {
						return fmt.Errorf("%s, page at byte %d: %w", where, pos, err)
					}
					return fmt.Errorf("not a readable parquet file: %s, page at byte %d: %v", where, pos, err)
				}
				if data {
					values += nv
				}
				pos += int64(n) + int64(hdr.CompressedPageSize)
			}
			if values > m.NumValues && m.NumValues >= 0 {
				return fmt.Errorf("not a readable parquet file: %s: its pages declare %d values, its metadata %d", where, values, m.NumValues)
			}
		}
	}
	return nil
}
