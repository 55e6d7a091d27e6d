//go:build !syncwatch_off

package lockorder

import (
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncwatch/syncwatch/internal/waitfor"
)

// leakViolation reports goroutine id, which d shows the runtime found
// blocked for good: what syncwatch knows of its wait (the primitive, who
// holds it, the chain or cycle of waits), its stack, and where it was
// started. Each goroutine is reported once: its Key is its id.
func leakViolation(id int64, g *waitfor.Graph, d *waitfor.Dump) Violation {
	r, _ := d.Routine(id)
	var v Violation
	if w := g.Wait(id); w != nil {
		v = waitViolation(KindLeaked, waitfor.Finding{Waits: []*waitfor.Wait{w}, Graph: g, Dump: d},
			leakedWhat(waitfor.Describe(w)))
	} else {
		v = Violation{Kind: KindLeaked, Time: time.Now(), Goroutine: id, Stack: framesOf(r.Frames)}
		v.Message = goroutineState(id, waitfor.RoutineState(d, id))
	}
	if v.Detail != "" {
		v.Detail += "\n"
	}
	created := ""
	if r.Created.Function != "" {
		created = r.Created.String()
	}
	v.Detail += leakedDetail(created)
	v.Attrs = append(v.Attrs, attribute.String(TopFunctionAttribute, r.Top))
	v.Key = fmt.Sprintf("%s:%d", KindLeaked, id)
	return v
}
