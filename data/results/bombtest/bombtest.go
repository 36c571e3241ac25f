package bombtest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Payload returns n zero bytes compressed with codec: zstd in one frame
// that declares its content size (fcs) or as a stream that does not,
// gzip or snappy.
func Payload(codec format.CompressionCodec, n int64, fcs bool) ([]byte, error) {
	var b bytes.Buffer
	zeros := io.LimitReader(zeroReader{}, n)
	switch codec {
	case format.Zstd:
		if fcs {
			e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
			if err != nil {
				return nil, err
			}
			return e.EncodeAll(make([]byte, n), nil), nil
		}
		e, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		if _, err := io.Copy(e, zeros); err != nil {
			return nil, err
		}
		err = e.Close()
		return b.Bytes(), err
	case format.Gzip:
		w := gzip.NewWriter(&b)
		if _, err := io.Copy(w, zeros); err != nil {
			return nil, err
		}
		err := w.Close()
		return b.Bytes(), err
	case format.Snappy:
		return snappy.Encode(nil, make([]byte, n)), nil
	}
	return nil, fmt.Errorf("bombtest: codec %v", codec)
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// Plant returns the parquet file b with the first page of column chunk
// col of row group 0 replaced by payload, compressed with codec, its
// header keeping its declared uncompressed size and value count: the
// file's other pages are copied, their offsets moved, and the page
// indexes dropped. The column chunk must hold one page (no dictionary).
func Plant(b []byte, col int, codec format.CompressionCodec, payload []byte) ([]byte, error) {
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	var md format.FileMetaData
	proto := &thrift.CompactProtocol{}
	if err := thrift.Unmarshal(proto, b[int64(len(b))-8-n:len(b)-8], &md); err != nil {
		return nil, err
	}
	if len(md.RowGroups) == 0 || col >= len(md.RowGroups[0].Columns) {
		return nil, fmt.Errorf("bombtest: no column chunk %d", col)
	}
	out := []byte("PAR1")
	for gi := range md.RowGroups {
		for ci := range md.RowGroups[gi].Columns {
			cc := &md.RowGroups[gi].Columns[ci]
			m := &cc.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			chunk := b[start : start+m.TotalCompressedSize]
			if gi == 0 && ci == col {
				var err error
				if chunk, err = plantPage(chunk, codec, payload); err != nil {
					return nil, err
				}
				m.Codec, m.DictionaryPageOffset = codec, 0
			}
			shift := int64(len(out)) - start
			m.DataPageOffset += shift
			if m.DictionaryPageOffset > 0 {
				m.DictionaryPageOffset += shift
			}
			m.TotalCompressedSize = int64(len(chunk))
			cc.FileOffset = 0
			cc.OffsetIndexOffset, cc.OffsetIndexLength, cc.ColumnIndexOffset, cc.ColumnIndexLength = 0, 0, 0, 0
			out = append(out, chunk...)
		}
	}
	foot, err := thrift.Marshal(proto, &md)
	if err != nil {
		return nil, err
	}
	out = append(out, foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	return append(out, "PAR1"...), nil
}

// plantPage returns a chunk of the one page of chunk with its data
// replaced by payload.
func plantPage(chunk []byte, codec format.CompressionCodec, payload []byte) ([]byte, error) {
	var h format.PageHeader
	proto := &thrift.CompactProtocol{}
	r := bytes.NewReader(chunk)
	if err := thrift.NewDecoder(proto.NewReader(r)).Decode(&h); err != nil {
		return nil, err
	}
	if h.DictionaryPageHeader.Valid {
		return nil, fmt.Errorf("bombtest: the chunk starts with a dictionary page")
	}
	if v2 := &h.DataPageHeaderV2; v2.Valid {
		v2.V.RepetitionLevelsByteLength, v2.V.DefinitionLevelsByteLength = 0, 0
		v2.V.IsCompressed = thrift.New(true)
	}
	h.CompressedPageSize = int32(len(payload))
	h.CRC = 0
	hb, err := thrift.Marshal(proto, &h)
	if err != nil {
		return nil, err
	}
	return append(hb, payload...), nil
}
