package paramserver

import "math"

// expMask selects the exponent bits of a float32: all ones for NaN and the
// infinities, and only for them.
const expMask = 0x7f800000

// finite reports whether x is neither NaN nor an infinity.
func finite(x float32) bool { return math.Float32bits(x)&expMask != expMask }

// firstNonFinite returns the index of the first non-finite value of v, -1
// if there is none.
func firstNonFinite(v []float32) int {
	for i, x := range v {
		if !finite(x) {
			return i
		}
	}
	return -1
}

// checkFinite returns a *NonFiniteError of the given source for the
// smallest key of p holding a non-finite value, at its first index; nil
// if every value is finite.
func checkFinite(p Params, source NonFiniteSource) error {
	var bad *NonFiniteError
	for k, v := range p {
		if bad != nil && k >= bad.Key {
			continue
		}
		if i := firstNonFinite(v); i >= 0 {
			bad = &NonFiniteError{Source: source, Key: k, Index: i, Value: v[i]}
		}
	}
	if bad == nil {
		return nil // not a typed nil
	}
	return bad
}

// checkSum returns a *NonFiniteError, of source NonFiniteUpdate, if adding
// grad to sum would make a non-finite value; nil otherwise. A key absent
// from sum adds to zeros.
func checkSum(sum, grad Params) error {
	var bad *NonFiniteError
	for k, g := range grad {
		acc := sum[k]
		if acc == nil || (bad != nil && k >= bad.Key) {
			continue
		}
		for i, x := range g {
			if y := acc[i] + x; !finite(y) {
				bad = &NonFiniteError{Source: NonFiniteUpdate, Key: k, Index: i, Value: y}
				break
			}
		}
	}
	if bad == nil {
		return nil
	}
	return bad
}
