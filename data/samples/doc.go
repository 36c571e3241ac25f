// Package samples embeds small logs in the schema of package data, so
// tests and the main job can replay real-structured runs without any
// model at hand. See README.md in this directory for their provenance;
// data/samples/gen regenerates them.
package samples // import "github.com/specsim/specsim/data/samples"
