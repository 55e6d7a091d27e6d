//go:build !syncwatch_off

package debughttp

// Internals reached by the external tests.
var (
	ParseDOT  = parseDOT
	RenderSVG = renderSVG
	ParseHeld = parseHeld
)
