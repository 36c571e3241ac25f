package plots

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"sort"
	"sync"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/specsim/specsim/algos"
)

// Style is the colour and marker of one algorithm (or reference curve),
// the same in every figure.
type Style struct {
	Color color.RGBA
	Shape draw.GlyphDrawer
	// Dashes is the line dash pattern (nil: solid).
	Dashes []vg.Length
}

func rgb(h uint32) color.RGBA {
	return color.RGBA{uint8(h >> 16), uint8(h >> 8), uint8(h), 255}
}

var (
	circle   = draw.CircleGlyph{}
	ring     = draw.RingGlyph{}
	square   = draw.SquareGlyph{}
	box      = draw.BoxGlyph{}
	triangle = draw.TriangleGlyph{}
	pyramid  = draw.PyramidGlyph{}
	cross    = draw.CrossGlyph{}
	plus     = draw.PlusGlyph{}
	shapes   = []draw.GlyphDrawer{circle, square, triangle, ring, box, pyramid, cross, plus}
)

// algoStyles fixes a colour and marker per algorithm name. Colours are
// distinct within each family that shares a figure (single-chain rules,
// lossy rules, multi-draft verifiers).
var algoStyles = map[string]Style{
	// single-chain lossless rules
	"token":         {rgb(0x0072B2), circle, nil},
	"block":         {rgb(0xD55E00), square, nil},
	"token-nobonus": {rgb(0xE7298A), ring, nil},
	"greedy":        {rgb(0x6A3D9A), triangle, nil},
	"exact-match":   {rgb(0x999933), cross, nil},
	// lossy rules
	"mentored":            {rgb(0x000000), circle, nil},
	"lenience":            {rgb(0xE69F00), triangle, nil},
	"lenience-residual-p": {rgb(0x117733), pyramid, nil},
	"typical":             {rgb(0x004488), box, nil},
	"cascade-chow":        {rgb(0x882255), plus, nil},
	"cascade-diff":        {rgb(0x6699CC), ring, nil},
	"cascade-opt":         {rgb(0xE377C2), square, nil},
	"fuzzy":               {rgb(0xCC3311), cross, nil},
	// multi-draft verifiers
	"specinfer":      {rgb(0xEE6677), circle, nil},
	"rrs-wor":        {rgb(0xAA4499), square, nil},
	"kseq":           {rgb(0x66CCEE), triangle, nil},
	"target-only":    {rgb(0x8C564B), box, nil},
	"greedy-draft":   {rgb(0xA6761D), pyramid, nil},
	"shared-uniform": {rgb(0x2CA02C), ring, nil},
	"best-candidate": {rgb(0x7570B3), plus, nil},
	"naive":          {rgb(0x44AA99), cross, nil},
	// reference curves
	"eq1":       {rgb(0x000000), ring, []vg.Length{vg.Points(3), vg.Points(2)}},
	"bound-iid": {rgb(0x000000), plus, []vg.Length{vg.Points(4), vg.Points(2)}},
	"bound-wor": {rgb(0x7F7F7F), plus, []vg.Length{vg.Points(1), vg.Points(2)}},
}

// extra colours for names without a fixed style.
var extra = []uint32{0x4477AA, 0xEE6677, 0x228833, 0xCCBB44, 0x66CCEE, 0xAA3377, 0xBBBBBB, 0x332288}

// StyleOf returns the style of an algorithm: its fixed style if it has one,
// else for a registered rule the automatic style autoStyles gave it, else a
// stable style derived from the name (for curves that are not rules).
func StyleOf(name string) Style {
	if s, ok := algoStyles[name]; ok {
		return s
	}
	if s, ok := autoStyles()[name]; ok {
		return s
	}
	return autoStyle(autoSlot(name))
}

// autoSlot is the preferred automatic style of a name: a hash of the name
// into the len(extra) × len(shapes) (colour, marker) pairs.
func autoSlot(name string) int {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	return int(v%uint32(len(extra))) + len(extra)*int((v/8)%uint32(len(shapes)))
}

func autoStyle(slot int) Style {
	return Style{rgb(extra[slot%len(extra)]), shapes[slot/len(extra)], nil}
}

// styleKey identifies a style's colour and marker.
func styleKey(s Style) string { return fmt.Sprintf("%v/%T", s.Color, s.Shape) }

// autoStyles gives every registered rule (chain or tree, mutants included)
// without a fixed style its own colour and marker, distinct from every
// fixed style and from each other, so adding a rule needs no style entry:
// each name takes its hashed slot, or the next free one (names in sorted
// order), so a rule's style changes only when a new rule collides with it.
var autoStyles = sync.OnceValue(func() map[string]Style {
	used := map[string]bool{}
	for _, s := range algoStyles {
		used[styleKey(s)] = true
	}
	var names []string
	for _, n := range append(algos.Names(), algos.TreeNames()...) {
		if _, fixed := algoStyles[n]; !fixed {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	n := len(extra) * len(shapes)
	out := map[string]Style{}
	for _, name := range names {
		slot := autoSlot(name)
		for k := 0; k < n && used[styleKey(autoStyle(slot))]; k++ {
			slot = (slot + 1) % n
		}
		s := autoStyle(slot)
		used[styleKey(s)] = true // past n rules the pairs repeat
		out[name] = s
	}
	return out
})

// seq is a sequential palette (viridis, light end dropped so every colour
// reads on white) for parameter series such as α, c or β.
var seq = []uint32{0x440154, 0x3B528B, 0x21918C, 0x5EC962, 0xB8A800}

// Seq returns colour i of n of the sequential palette.
func Seq(i, n int) color.RGBA {
	if n <= 1 {
		return rgb(seq[0])
	}
	j := i * (len(seq) - 1) / (n - 1)
	return rgb(seq[min(j, len(seq)-1)])
}
