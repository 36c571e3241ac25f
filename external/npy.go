package external

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// npyMagic opens every .npy frame (NumPy format version 1.0).
const npyMagic = "\x93NUMPY\x01\x00"

// npyAlign is the alignment of a frame's data offset: NumPy pads the
// header so that magic + length + header is a multiple of 64 bytes.
const npyAlign = 64

// maxNpyHeader bounds the header dict a reader accepts (NumPy's own v1
// headers are a few dozen bytes); a larger one is malformed.
const maxNpyHeader = 4096

// maxNpyElems bounds the elements of one array a reader accepts, so a
// lying length cannot make the harness allocate without bound.
const maxNpyElems = 1 << 30

// array is one decoded .npy frame: its dtype descr ("<i8", "<f4", ...),
// its C-order shape and its data converted to int64 (integer dtypes) or
// float32 (float dtypes).
type array struct {
	Descr string
	Shape []int
	I64   []int64
	F32   []float32
}

// writeNpyHeader writes the frame header of a C-order array.
func writeNpyHeader(w io.Writer, descr string, shape []int) error {
	var sb strings.Builder
	sb.WriteString("{'descr': '")
	sb.WriteString(descr)
	sb.WriteString("', 'fortran_order': False, 'shape': (")
	for i, d := range shape {
		sb.WriteString(strconv.Itoa(d))
		if i == 0 || i < len(shape)-1 {
			sb.WriteString(",")
		}
		if i < len(shape)-1 {
			sb.WriteString(" ")
		}
	}
	sb.WriteString("), }")
	h := sb.String()
	total := len(npyMagic) + 2 + len(h) + 1
	pad := (npyAlign - total%npyAlign) % npyAlign
	h += strings.Repeat(" ", pad) + "\n"
	var buf [10]byte
	copy(buf[:], npyMagic)
	binary.LittleEndian.PutUint16(buf[8:], uint16(len(h)))
	if _, err := w.Write(buf[:]); err != nil {
		return err
	}
	_, err := io.WriteString(w, h)
	return err
}

// writeF32 writes a float32 array frame of the given shape; len(x) must
// be the product of shape.
func writeF32(w io.Writer, shape []int, x []float32, scratch []byte) ([]byte, error) {
	if err := writeNpyHeader(w, "<f4", shape); err != nil {
		return scratch, err
	}
	scratch = grow(scratch, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(scratch[4*i:], math.Float32bits(v))
	}
	_, err := w.Write(scratch)
	return scratch, err
}

// writeF64 writes a float64 array frame of the given shape.
func writeF64(w io.Writer, shape []int, x []float64, scratch []byte) ([]byte, error) {
	if err := writeNpyHeader(w, "<f8", shape); err != nil {
		return scratch, err
	}
	scratch = grow(scratch, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(scratch[8*i:], math.Float64bits(v))
	}
	_, err := w.Write(scratch)
	return scratch, err
}

// writeI64 writes an int64 array frame of the given shape.
func writeI64(w io.Writer, shape []int, x []int64, scratch []byte) ([]byte, error) {
	if err := writeNpyHeader(w, "<i8", shape); err != nil {
		return scratch, err
	}
	scratch = grow(scratch, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(scratch[8*i:], uint64(v))
	}
	_, err := w.Write(scratch)
	return scratch, err
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// errShape is readNpy's error for a frame of another shape than expected.
var errShape = errors.New("has shape")

// readNpy reads one frame, reusing dst's slices. It accepts little-endian
// signed and unsigned integers of 1, 2, 4 and 8 bytes, booleans and
// float16/32/64, in C order; anything else is an error naming the dtype.
// With expect, the frame's shape must be expect, checked from its header
// before anything is allocated for its data (a reply's size is the
// harness's to state, never the implementation's).
func readNpy(r *bufio.Reader, dst *array, scratch []byte, expect ...int) ([]byte, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return scratch, err
	}
	if string(pre[:6]) != npyMagic[:6] {
		return scratch, fmt.Errorf("not a .npy frame (it starts with %q)", pre[:6])
	}
	if pre[6] != 1 {
		return scratch, fmt.Errorf(".npy format version %d.%d; write version 1.0 (numpy.lib.format.write_array(..., version=(1, 0)))", pre[6], pre[7])
	}
	hl := int(binary.LittleEndian.Uint16(pre[8:]))
	if hl > maxNpyHeader {
		return scratch, fmt.Errorf(".npy header of %d bytes is too long", hl)
	}
	scratch = grow(scratch, hl)
	if _, err := io.ReadFull(r, scratch); err != nil {
		return scratch, err
	}
	descr, fortran, shape, err := parseNpyHeader(string(scratch))
	if err != nil {
		return scratch, err
	}
	if fortran {
		return scratch, fmt.Errorf(".npy frame is in Fortran order; send a C-contiguous array")
	}
	n := 1
	for _, d := range shape {
		if d < 0 || (d > 0 && n > maxNpyElems/d) {
			return scratch, fmt.Errorf(".npy shape %v is too large", shape)
		}
		n *= d
	}
	if expect != nil && !slices.Equal(shape, expect) {
		return scratch, fmt.Errorf("%w %v, want %v", errShape, shape, expect)
	}
	size, kind, err := dtypeOf(descr)
	if err != nil {
		return scratch, err
	}
	dst.Descr, dst.Shape = descr, shape
	scratch = grow(scratch, n*size)
	if _, err := io.ReadFull(r, scratch); err != nil {
		return scratch, err
	}
	dst.I64, dst.F32 = dst.I64[:0], dst.F32[:0]
	if kind == 'f' {
		dst.F32 = decodeFloats(dst.F32, scratch, n, size)
	} else {
		dst.I64 = decodeInts(dst.I64, scratch, n, size, kind)
	}
	return scratch, nil
}

// decodeFloats decodes n little-endian floats of size bytes (2, 4 or 8)
// from b into dst's storage, as float32.
func decodeFloats(dst []float32, b []byte, n, size int) []float32 {
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	for i := range n {
		e := b[i*size:]
		switch size {
		case 2:
			dst[i] = half(binary.LittleEndian.Uint16(e))
		case 4:
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(e))
		case 8:
			dst[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(e)))
		}
	}
	return dst
}

// decodeInts decodes n little-endian integers of size bytes (1, 2, 4 or
// 8) from b into dst's storage, as int64: signed where kind is 'i', else
// unsigned (a uint64 above MaxInt64 saturates).
func decodeInts(dst []int64, b []byte, n, size int, kind byte) []int64 {
	if cap(dst) < n {
		dst = make([]int64, n)
	}
	dst = dst[:n]
	for i := range n {
		e := b[i*size:]
		var v int64
		switch size {
		case 1:
			v = int64(e[0])
			if kind == 'i' {
				v = int64(int8(e[0]))
			}
		case 2:
			u := binary.LittleEndian.Uint16(e)
			v = int64(u)
			if kind == 'i' {
				v = int64(int16(u))
			}
		case 4:
			u := binary.LittleEndian.Uint32(e)
			v = int64(u)
			if kind == 'i' {
				v = int64(int32(u))
			}
		case 8:
			u := binary.LittleEndian.Uint64(e)
			v = int64(u)
			if kind == 'u' && u > math.MaxInt64 {
				v = math.MaxInt64
			}
		}
		dst[i] = v
	}
	return dst
}

// dtypeOf returns the item size and kind ('i', 'u', 'b', 'f') of a
// little-endian (or byte-sized) NumPy descr.
func dtypeOf(descr string) (int, byte, error) {
	if len(descr) >= 3 && (descr[0] == '<' || descr[0] == '|') {
		size, err := strconv.Atoi(descr[2:])
		kind := descr[1]
		if err == nil {
			switch {
			case kind == 'i' || kind == 'u':
				if size == 1 || size == 2 || size == 4 || size == 8 {
					return size, kind, nil
				}
			case kind == 'b' && size == 1:
				return 1, 'u', nil
			case kind == 'f':
				if size == 2 || size == 4 || size == 8 {
					return size, 'f', nil
				}
			}
		}
	}
	return 0, 0, fmt.Errorf("unsupported .npy dtype %q; send little-endian integers or floats", descr)
}

// parseNpyHeader parses the Python dict literal of a v1 header:
// {'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }.
func parseNpyHeader(h string) (descr string, fortran bool, shape []int, err error) {
	h = strings.TrimSpace(h)
	bad := func(what string) error { return fmt.Errorf("malformed .npy header %q: %s", h, what) }
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return "", false, nil, bad("not a dict")
	}
	field := func(key string) (string, bool) {
		i := strings.Index(h, "'"+key+"'")
		if i < 0 {
			return "", false
		}
		rest := strings.TrimSpace(h[i+len(key)+2:])
		if !strings.HasPrefix(rest, ":") {
			return "", false
		}
		return strings.TrimSpace(rest[1:]), true
	}
	d, ok := field("descr")
	if !ok || !strings.HasPrefix(d, "'") {
		return "", false, nil, bad("no descr")
	}
	end := strings.IndexByte(d[1:], '\'')
	if end < 0 {
		return "", false, nil, bad("unterminated descr")
	}
	descr = d[1 : 1+end]
	f, ok := field("fortran_order")
	if !ok {
		return "", false, nil, bad("no fortran_order")
	}
	fortran = strings.HasPrefix(f, "True")
	s, ok := field("shape")
	if !ok || !strings.HasPrefix(s, "(") {
		return "", false, nil, bad("no shape")
	}
	end = strings.IndexByte(s, ')')
	if end < 0 {
		return "", false, nil, bad("unterminated shape")
	}
	for _, part := range strings.Split(s[1:end], ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		d, e := strconv.Atoi(strings.TrimSuffix(part, "L"))
		if e != nil || d < 0 {
			return "", false, nil, bad("shape entry " + part)
		}
		shape = append(shape, d)
	}
	return descr, fortran, shape, nil
}

// half converts an IEEE 754 binary16 value to float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		f := float32(frac) / 1024 / 16384
		if sign != 0 {
			return -f
		}
		return f
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
