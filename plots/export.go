package plots

import (
	"fmt"

	"gonum.org/v1/plot/vg/draw"
)

// NamedStyle is a fixed style in a form other plotting tools read: the
// notebooks load notebooks/styles.json, written from NamedStyles, so their
// figures use the report's colour and marker for each rule.
type NamedStyle struct {
	// Color is "#RRGGBB".
	Color string `json:"color"`
	// Marker is the matplotlib marker of the glyph ("o", "s", "^", "x",
	// "+").
	Marker string `json:"marker"`
	// Filled is false for the hollow glyphs (ring, square, triangle).
	Filled bool `json:"filled"`
	// Dashes is the line dash pattern in points (empty: solid).
	Dashes []float64 `json:"dashes,omitempty"`
}

// NamedStyles returns every fixed style by name.
func NamedStyles() map[string]NamedStyle {
	out := make(map[string]NamedStyle, len(algoStyles))
	for name, s := range algoStyles {
		marker, filled := markerOf(s.Shape)
		ns := NamedStyle{Color: fmt.Sprintf("#%02X%02X%02X", s.Color.R, s.Color.G, s.Color.B), Marker: marker, Filled: filled}
		for _, d := range s.Dashes {
			ns.Dashes = append(ns.Dashes, d.Points())
		}
		out[name] = ns
	}
	return out
}

// markerOf maps a gonum glyph to a matplotlib marker and whether it is
// filled.
func markerOf(g draw.GlyphDrawer) (marker string, filled bool) {
	switch g.(type) {
	case draw.CircleGlyph:
		return "o", true
	case draw.RingGlyph:
		return "o", false
	case draw.BoxGlyph:
		return "s", true
	case draw.SquareGlyph:
		return "s", false
	case draw.PyramidGlyph:
		return "^", true
	case draw.TriangleGlyph:
		return "^", false
	case draw.CrossGlyph:
		return "x", true
	case draw.PlusGlyph:
		return "+", true
	}
	return "o", true
}
