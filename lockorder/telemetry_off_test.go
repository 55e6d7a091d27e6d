//go:build syncwatch_off

package lockorder_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/syncwatch/syncwatch/lockorder"
)

// With -tags syncwatch_off the telemetry API is there and reports nothing:
// a valid wait profile with no samples, an empty graph.
func TestOffBuildTelemetryIsEmpty(t *testing.T) {
	a, b := lockorder.NewMutex("A"), lockorder.NewMutex("B")
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	lockorder.ResetWaitProfile()

	var buf bytes.Buffer
	before := time.Now()
	if err := lockorder.WriteWaitProfile(&buf); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 2 || p.SampleType[1].Type != "delay" || len(p.Sample) != 0 {
		t.Fatalf("wait profile %v", p)
	}
	// It covers the time since the process started, up to now.
	if p.DurationNanos <= 0 || time.Unix(0, p.TimeNanos).Before(before) {
		t.Fatalf("wait profile taken at %v, covering %v; written after %v", time.Unix(0, p.TimeNanos), time.Duration(p.DurationNanos), before)
	}

	buf.Reset()
	if err := lockorder.WriteDOT(&buf); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "digraph lockorder {\n\tnode [shape=box];\n}\n"; got != want {
		t.Fatalf("WriteDOT = %q, want %q", got, want)
	}
}
