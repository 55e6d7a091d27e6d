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
			"is blocked for good, in a wait for "+waitfor.Describe(w))
	} else {
		v = Violation{Kind: KindLeaked, Time: time.Now(), Goroutine: id, Stack: framesOf(r.Frames)}
		v.Message = fmt.Sprintf("goroutine %d %s", id, waitfor.RoutineState(d, id))
	}
	if v.Detail != "" {
		v.Detail += "\n"
	}
	v.Detail += "the runtime found nothing that can wake it (what it waits on is out of every runnable goroutine's reach)"
	if r.Created.Function != "" {
		v.Detail += "\nit was started by " + r.Created.String()
	}
	v.Attrs = append(v.Attrs, attribute.String(TopFunctionAttribute, r.Top))
	v.Key = fmt.Sprintf("%s:%d", KindLeaked, id)
	return v
}
