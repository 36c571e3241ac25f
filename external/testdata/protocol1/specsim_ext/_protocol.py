"""The wire format of the specsim external-implementation protocol.

Every message, in both directions, is one JSON header line (UTF-8, ending
in a newline) followed by the .npy version 1.0 frames its "arrays" field
names, in order. The byte-by-byte description is in the Go package
github.com/specsim/specsim/external (external/doc.go).
"""

import json

import numpy as np

_MAGIC = b"\x93NUMPY\x01\x00"


def read_header(stream):
    """Read one header line; None at end of input."""
    line = stream.readline()
    if not line:
        return None
    return json.loads(line)


def write_header(stream, header):
    stream.write(json.dumps(header, separators=(",", ":")).encode() + b"\n")


def read_array(stream):
    """Read one .npy v1.0 frame as a read-only array (no copy of the data)."""
    pre = stream.read(10)
    if len(pre) != 10 or pre[:8] != _MAGIC:
        raise ValueError("expected a .npy v1.0 frame, got %r" % pre[:8])
    hlen = int.from_bytes(pre[8:10], "little")
    h = stream.read(hlen).decode("latin1")
    # The header is a Python dict literal written by the harness; parse
    # it without eval.
    descr = h.split("'descr':", 1)[1].split("'")[1]
    shape_txt = h.split("'shape':", 1)[1].split("(", 1)[1].split(")", 1)[0]
    shape = tuple(int(s) for s in shape_txt.split(",") if s.strip())
    dtype = np.dtype(descr)
    n = dtype.itemsize
    for d in shape:
        n *= d
    data = stream.read(n)
    if len(data) != n:
        raise EOFError("the harness closed the stream inside a frame")
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def write_array(stream, a):
    """Write a C-contiguous little-endian array as a .npy v1.0 frame."""
    a = np.asarray(a)
    if a.dtype.hasobject:
        raise TypeError("the function returned an array of dtype object; return numpy integer arrays")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    a = np.ascontiguousarray(a)
    shape = "(" + "".join("%d, " % d for d in a.shape).rstrip(" ")
    if len(a.shape) > 1:
        shape = shape.rstrip(",")
    shape += ")"
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (a.dtype.str, shape)
    total = 10 + len(h) + 1
    h += " " * ((64 - total % 64) % 64) + "\n"
    stream.write(_MAGIC + len(h).to_bytes(2, "little") + h.encode("latin1"))
    stream.write(a.tobytes())
