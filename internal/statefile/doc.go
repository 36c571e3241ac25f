// Package statefile reads and writes the state file of one shard of a
// sharded check ('simulate check --shard I/N --state-out FILE'): the
// file that a shard leaves behind, a rerun continues and 'simulate check
// --merge' combines into the verdict one process gives.
//
// A state file is, in order: the 8-byte magic "SPECSIMS", the format
// revision (uint32, big-endian), the length of the header (uint32) and the
// header as JSON (Header: the check's configuration as the command line
// resolved it, the master seed, the shard i of N, the implementation and
// its protocol for an external check, the project revision, the trials
// done and wanted), the length of the payload (uint64) and the payload
// (the check's tallies, sim/check's State.MarshalBinary), then the SHA-256
// of everything before it. Write replaces the file atomically
// (internal/fsutil); Read refuses, as a usage error naming the file, a
// file larger than the memory budget, a wrong magic or format revision,
// a length that passes the bytes present, a checksum that does not match
// and a header that does not decode; it allocates nothing a length field
// declares before checking it against the bytes read. Compatible checks
// that a set of files are the N shards of one check, each once.
package statefile // import "github.com/specsim/specsim/internal/statefile"
