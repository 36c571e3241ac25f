package plots

import (
	"errors"
	"fmt"
	"image/color"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgpdf"
)

// outlinePDF is a PDF canvas that draws text as the filled glyph outlines
// of the figure's TrueType font (Liberation, gonum/plot's default, which
// covers Greek and the mathematical symbols the labels use).
//
// gonum's PDF backend would embed the font as a code page 1252 TrueType
// font, which has no α, β, γ or π; drawing the outlines keeps every
// character and keeps the figure vector: the PDF holds paths only, no
// font and no image.
type outlinePDF struct {
	*vgpdf.Canvas
	buf sfnt.Buffer
}

// SetColor implements vg.Canvas with straight (non-premultiplied) alpha.
//
// gonum's PDF backend writes a colour's RGBA() components, which Go
// defines premultiplied by alpha, as the PDF fill colour and then sets
// the alpha as a transparency state: a translucent band came out dark
// grey in the PDF (the colour darkened once by the premultiplication and
// again by the blending) while the PNG showed it light. PDF colours are
// straight, so the colour is un-premultiplied before it is handed on.
func (c *outlinePDF) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.Canvas.SetColor(straight(color.NRGBAModel.Convert(clr).(color.NRGBA)))
}

// straight is an NRGBA colour whose RGBA method returns its components
// unscaled by alpha (16-bit), which is what a PDF colour operator takes.
// It is only handed to the PDF backend, which reads the components and
// the alpha separately.
type straight color.NRGBA

// RGBA implements color.Color without premultiplying.
func (s straight) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// FillString implements vg.Canvas: it fills the outline of each glyph of
// str, kerned exactly as font.Face.Width measures the string, with the
// baseline's left end at pt.
func (c *outlinePDF) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 {
		return
	}
	p, err := glyphPath(&c.buf, f, pt, str)
	if err != nil {
		// every font gonum hands out is a valid sfnt font, so an error
		// here is a broken font file, a programmer's error
		panic(err)
	}
	c.Fill(p)
}

// glyphPath returns the outlines of str drawn with f, its baseline
// starting at pt. Glyph coordinates are requested at a size of one font
// unit per 26.6 unit (as font.Face.Width does), so they convert to points
// by f.Font.Size / UnitsPerEm.
func glyphPath(buf *sfnt.Buffer, f font.Face, pt vg.Point, str string) (vg.Path, error) {
	upe := fixed.Int26_6(f.Face.UnitsPerEm())
	scale := float64(f.Font.Size) / float64(upe)
	var (
		path    vg.Path
		x       fixed.Int26_6
		prev    sfnt.GlyphIndex
		hasPrev bool
	)
	// at converts a glyph point (y down, 26.6 font units) to the canvas.
	at := func(origin fixed.Int26_6, q fixed.Point26_6) vg.Point {
		return vg.Point{
			X: pt.X + vg.Length(float64(origin+q.X)*scale),
			Y: pt.Y - vg.Length(float64(q.Y)*scale),
		}
	}
	for _, r := range str {
		idx, err := f.Face.GlyphIndex(buf, r)
		if err != nil {
			return nil, fmt.Errorf("plots: glyph of %q in %s: %w", r, f.Name(), err)
		}
		if hasPrev {
			k, err := f.Face.Kern(buf, prev, idx, upe, 0)
			switch {
			case err == nil:
				x += k
			case errors.Is(err, sfnt.ErrNotFound):
			default:
				return nil, fmt.Errorf("plots: kerning in %s: %w", f.Name(), err)
			}
		}
		segs, err := f.Face.LoadGlyph(buf, idx, upe, nil)
		if err != nil {
			return nil, fmt.Errorf("plots: outline of %q in %s: %w", r, f.Name(), err)
		}
		open := false
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if open {
					path.Close()
				}
				path.Move(at(x, s.Args[0]))
				open = true
			case sfnt.SegmentOpLineTo:
				path.Line(at(x, s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				path.QuadTo(at(x, s.Args[0]), at(x, s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				path.CubeTo(at(x, s.Args[0]), at(x, s.Args[1]), at(x, s.Args[2]))
			}
		}
		if open {
			path.Close()
		}
		adv, err := f.Face.GlyphAdvance(buf, idx, upe, 0)
		if err != nil {
			return nil, fmt.Errorf("plots: advance of %q in %s: %w", r, f.Name(), err)
		}
		x += adv
		prev, hasPrev = idx, true
	}
	return path, nil
}

// missingGlyphs returns the runes of str that f has no glyph for (they
// would be drawn as the .notdef box).
func missingGlyphs(f font.Face, str string) []rune {
	var buf sfnt.Buffer
	var out []rune
	for _, r := range str {
		if idx, err := f.Face.GlyphIndex(&buf, r); err != nil || idx == 0 {
			out = append(out, r)
		}
	}
	return out
}
