package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/specsim/specsim/internal/diag"
	"github.com/specsim/specsim/internal/fsutil"
	"github.com/specsim/specsim/sim"
)

// Magic opens every state file.
const Magic = "SPECSIMS"

// Format is the revision of the state file's layout and header that this
// program writes and reads; a file of another revision is refused.
const Format = 1

// prefix is the magic, the format revision and the header's length;
// suffix the checksum.
const (
	prefix = len(Magic) + 4 + 4
	suffix = sha256.Size
)

// Header is a state file's description of the shard it holds.
type Header struct {
	// Format is the format revision (also in the binary prefix).
	Format int `json:"format"`
	// Config holds every flag that changes the check's trials or tests,
	// by name, with its values as the command line resolved them
	// (defaults included), and Given the names of those the command line
	// gave; a merge compares Config and rebuilds the check from Given.
	Config map[string][]string `json:"config"`
	Given  []string            `json:"given"`
	// Seed is the master seed.
	Seed uint64 `json:"seed"`
	// Shard is this file's shard (0-based) of Shards.
	Shard  int `json:"shard"`
	Shards int `json:"shards"`
	// Implementation and Protocol name an external check's
	// implementation (its hello's name) and protocol revision; empty and
	// 0 for an in-process rule.
	Implementation string `json:"implementation,omitempty"`
	Protocol       int    `json:"protocol,omitempty"`
	// Revision is the project revision of the program that wrote it
	// (internal/gitrev.Revision).
	Revision string `json:"revision"`
	// TrialsDone and TrialsWanted are the shard's finished and assigned
	// trials; the shard is finished when they are equal.
	TrialsDone   int64 `json:"trials_done"`
	TrialsWanted int64 `json:"trials_wanted"`
	// External is an external check's shard report (the implementation's
	// components: edge cases, invalid outcomes, determinism), which the
	// merge applies; absent for a rule of this program.
	External json.RawMessage `json:"external,omitempty"`
}

// Finished reports whether the shard ran all its trials.
func (h Header) Finished() bool { return h.TrialsDone == h.TrialsWanted }

// File is a state file read back: its path, header and payload.
type File struct {
	Path    string
	Header  Header
	Payload []byte
}

// Encode returns the bytes of a state file holding h and payload; h.Format
// is set to Format.
func Encode(h Header, payload []byte) ([]byte, error) {
	h.Format = Format
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(prefix + len(hj) + 8 + len(payload) + suffix)
	b.WriteString(Magic)
	b.Write(binary.BigEndian.AppendUint32(nil, Format))
	b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(hj))))
	b.Write(hj)
	b.Write(binary.BigEndian.AppendUint64(nil, uint64(len(payload))))
	b.Write(payload)
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes(), nil
}

// Write writes the state file at path atomically (a temporary file
// renamed over it, internal/fsutil), so an interrupt or a full disk
// leaves the previous state, never a truncated one.
func Write(path string, h Header, payload []byte) error {
	b, err := Encode(h, payload)
	if err != nil {
		return err
	}
	if err := fsutil.WriteBytes(path, b, 0o644); err != nil {
		return diag.IO(fmt.Errorf("writing the state file: %w", err))
	}
	return nil
}

// Read reads the state file at path, whole, refusing a file larger than
// budget bytes (0: sim.DefaultMemBudget) before reading it. Every error
// names path and is a usage error, except an I/O failure while reading.
func Read(path string, budget int64) (File, error) {
	if budget <= 0 {
		budget = sim.DefaultMemBudget
	}
	b, err := fsutil.ReadFile(path, budget)
	switch {
	case errors.Is(err, fsutil.ErrTooLarge):
		return File{}, diag.Usage(fmt.Errorf("%w; a state file is O(cells), so this is not one, or give a larger --mem-budget", err))
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fsutil.ErrNotRegular):
		return File{}, diag.Usage(fmt.Errorf("state file %s: %w", path, err))
	case err != nil:
		return File{}, diag.IO(fmt.Errorf("state file %s: %w", path, err))
	}
	h, payload, err := Decode(b)
	if err != nil {
		return File{}, diag.Usage(fmt.Errorf("state file %s: %w", path, err))
	}
	return File{Path: path, Header: h, Payload: payload}, nil
}

// Decode splits the bytes of a state file into its header and payload
// (a subslice of b), checking the magic, the format revision, every
// length against the bytes present and the checksum.
func Decode(b []byte) (Header, []byte, error) {
	var h Header
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		return h, nil, errors.New("not a specsim check state (no SPECSIMS magic); give a file written by 'simulate check --state-out'")
	}
	if len(b) < prefix+8+suffix {
		return h, nil, fmt.Errorf("truncated: %d bytes, fewer than any state file has; rerun its shard", len(b))
	}
	if v := binary.BigEndian.Uint32(b[len(Magic):]); v != Format {
		return h, nil, fmt.Errorf("state format revision %d; this simulate reads revision %d: rerun the shard with this simulate", v, Format)
	}
	body := b[:len(b)-suffix]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], b[len(body):]) {
		return h, nil, errors.New("damaged or truncated: its SHA-256 checksum does not match its content; rerun its shard")
	}
	hl := uint64(binary.BigEndian.Uint32(b[len(Magic)+4:]))
	if hl > uint64(len(body)-prefix-8) {
		return h, nil, fmt.Errorf("header length %d passes the %d bytes present; rerun its shard", hl, len(body)-prefix-8)
	}
	hj, rest := body[prefix:prefix+int(hl)], body[prefix+int(hl):]
	if pl := binary.BigEndian.Uint64(rest); pl != uint64(len(rest)-8) {
		return h, nil, fmt.Errorf("payload length %d, but %d bytes are present; rerun its shard", pl, len(rest)-8)
	}
	dec := json.NewDecoder(bytes.NewReader(hj))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, nil, fmt.Errorf("header does not decode: %v; rerun its shard", err)
	}
	if h.Format != Format {
		return h, nil, fmt.Errorf("header says format revision %d, its prefix %d; rerun its shard", h.Format, Format)
	}
	if h.Shards < 1 || h.Shard < 0 || h.Shard >= h.Shards || h.TrialsDone < 0 || h.TrialsDone > h.TrialsWanted {
		return h, nil, fmt.Errorf("header holds shard %d of %d with %d of %d trials, which no shard has; rerun its shard", h.Shard, h.Shards, h.TrialsDone, h.TrialsWanted)
	}
	return h, rest[8:], nil
}
