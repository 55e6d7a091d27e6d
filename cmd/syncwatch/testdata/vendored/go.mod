module example.com/vendored

go 1.22

require (
	example.com/vlib v1.0.0
	example.com/vtools v0.1.0 // required, but none of its packages built: not vendored
)

// A replace of a module nothing requires: vendor/modules.txt lists it.
replace example.com/unused => ./unused
