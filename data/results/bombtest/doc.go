// Package bombtest crafts decompression bombs for the tests of issue 30's
// H3 (data/results, internal/clitest): a parquet file one of whose pages
// declares a small uncompressed size in its header while its compressed
// data (zstd with or without a declared frame size, gzip, snappy) expands
// to a large one. It is test support: no command uses it.
package bombtest // import "github.com/specsim/specsim/data/results/bombtest"
