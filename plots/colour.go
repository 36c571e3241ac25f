package plots

import (
	"image/color"
	"math"
)

// Lab returns the CIE L*a*b* coordinates (D65 white) of an sRGB colour.
func Lab(c color.Color) (l, a, b float64) {
	r8, g8, b8, _ := color.NRGBAModel.Convert(c).RGBA()
	lin := func(v uint32) float64 {
		x := float64(v>>8) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	r, g, bl := lin(r8), lin(g8), lin(b8)
	// sRGB (IEC 61966-2-1) to XYZ, then relative to the D65 white point
	x := (0.4124564*r + 0.3575761*g + 0.1804375*bl) / 0.95047
	y := 0.2126729*r + 0.7151522*g + 0.0721750*bl
	z := (0.0193339*r + 0.1191920*g + 0.9503041*bl) / 1.08883
	f := func(t float64) float64 {
		const d = 6.0 / 29
		if t > d*d*d {
			return math.Cbrt(t)
		}
		return t/(3*d*d) + 4.0/29
	}
	fx, fy, fz := f(x), f(y), f(z)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}

// DeltaE2000 is the CIEDE2000 colour difference of two L*a*b* colours
// (Sharma, Wu and Dalal, "The CIEDE2000 color-difference formula",
// Color Res. Appl. 30(1), 2005, Eqs. 1–17, with kL = kC = kH = 1). About
// 2 is the smallest difference people notice side by side; categorical
// lines need far more.
func DeltaE2000(l1, a1, b1, l2, a2, b2 float64) float64 {
	rad, deg := math.Pi/180, 180/math.Pi
	c1, c2 := math.Hypot(a1, b1), math.Hypot(a2, b2)
	cb7 := math.Pow((c1+c2)/2, 7)
	g := 0.5 * (1 - math.Sqrt(cb7/(cb7+math.Pow(25, 7))))
	a1p, a2p := (1+g)*a1, (1+g)*a2
	c1p, c2p := math.Hypot(a1p, b1), math.Hypot(a2p, b2)
	hue := func(b, a float64) float64 {
		if a == 0 && b == 0 {
			return 0
		}
		h := math.Atan2(b, a) * deg
		if h < 0 {
			h += 360
		}
		return h
	}
	h1p, h2p := hue(b1, a1p), hue(b2, a2p)
	dL, dC := l2-l1, c2p-c1p
	var dh float64
	if c1p*c2p != 0 {
		dh = h2p - h1p
		if dh > 180 {
			dh -= 360
		} else if dh < -180 {
			dh += 360
		}
	}
	dH := 2 * math.Sqrt(c1p*c2p) * math.Sin(dh/2*rad)
	lb, cb := (l1+l2)/2, (c1p+c2p)/2
	hb := h1p + h2p
	if c1p*c2p != 0 {
		switch {
		case math.Abs(h1p-h2p) <= 180:
			hb /= 2
		case hb < 360:
			hb = (hb + 360) / 2
		default:
			hb = (hb - 360) / 2
		}
	}
	t := 1 - 0.17*math.Cos((hb-30)*rad) + 0.24*math.Cos(2*hb*rad) + 0.32*math.Cos((3*hb+6)*rad) - 0.20*math.Cos((4*hb-63)*rad)
	dTheta := 30 * math.Exp(-math.Pow((hb-275)/25, 2))
	cb7p := math.Pow(cb, 7)
	rc := 2 * math.Sqrt(cb7p/(cb7p+math.Pow(25, 7)))
	sl := 1 + 0.015*(lb-50)*(lb-50)/math.Sqrt(20+(lb-50)*(lb-50))
	sc := 1 + 0.045*cb
	sh := 1 + 0.015*cb*t
	rt := -math.Sin(2*dTheta*rad) * rc
	return math.Sqrt((dL/sl)*(dL/sl) + (dC/sc)*(dC/sc) + (dH/sh)*(dH/sh) + rt*(dC/sc)*(dH/sh))
}

// ColourDistance is the CIEDE2000 difference of two sRGB colours.
func ColourDistance(x, y color.Color) float64 {
	l1, a1, b1 := Lab(x)
	l2, a2, b2 := Lab(y)
	return DeltaE2000(l1, a1, b1, l2, a2, b2)
}

// Colour thresholds in CIEDE2000: styles drawn in one figure must differ
// at a glance (minSameFigure); any two named styles, which a user's own
// sweep or a notebook may put side by side, must not be mistaken for one
// another (minAnyPair; about 2.3 is the just noticeable difference).
const (
	minSameFigure = 20
	minAnyPair    = 10
)
