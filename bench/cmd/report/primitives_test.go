package main

import (
	"regexp"
	"strings"
	"testing"
)

const primitivesSample = `goos: linux
goarch: amd64
pkg: github.com/syncwatch/syncwatch/paramserver
cpu: Intel(R) Xeon(R) Processor
BenchmarkApply/workers=1-2   	   81397	      4518 ns/op	    4920 B/op	       9 allocs/op
BenchmarkApply/workers=1-2   	   81397	      4700 ns/op	    4920 B/op	       9 allocs/op
BenchmarkApply/workers=1-2   	   81397	      9000 ns/op	    4920 B/op	       9 allocs/op
BenchmarkGet/serial-2                    	58630593	         5.619 ns/op	       0 B/op	       0 allocs/op
PASS
`

func TestPrimitivesRenderMedians(t *testing.T) {
	out, err := Parse(strings.NewReader(primitivesSample))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	renderPrimitives(&b, []*Output{out})
	got := b.String()
	for _, want := range []string{
		"## Coordination primitives (medians)",
		"| paramserver | Apply/workers=1-2 | 4,700 | 4,920 | 9 |",
		"| paramserver | Get/serial-2 | 5.62 | 0 | 0 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	var empty strings.Builder
	renderPrimitives(&empty, nil)
	if empty.Len() != 0 {
		t.Fatal("rendered a section for no runs")
	}
}

func TestPrimitivesPlanFilter(t *testing.T) {
	all := PrimitivesPlan(Options{Count: 3, Benchtime: "1s"})
	if len(all) != 3 || !strings.HasSuffix(all[0].String(), "/barrier") || !strings.Contains(all[0].String(), "-count 3") {
		t.Fatalf("plan %v", all)
	}
	some := PrimitivesPlan(Options{Count: 1, Benchtime: "1s", Filter: regexp.MustCompile("paramserver")})
	if len(some) != 1 || !strings.HasSuffix(some[0].String(), "/paramserver") {
		t.Fatalf("filtered plan %v", some)
	}
}
