//go:build !syncwatch_off

package lockorder_test

import (
	"log"
	"net/http"
	"os"

	"github.com/syncwatch/syncwatch/lockorder"
)

//go:noinline
func moveFunds(accounts, ledger, journal *lockorder.Mutex) {
	accounts.Lock()
	ledger.Lock()
	journal.Lock()
	journal.Unlock()
	ledger.Unlock()
	accounts.Unlock()
}

//go:noinline
func reconcile(accounts, ledger *lockorder.Mutex) {
	ledger.Lock()
	accounts.Lock()
	accounts.Unlock()
	ledger.Unlock()
}

// WriteDOT draws the lock-order graph: each edge is labeled with where it
// was first seen, and the edges of a reported cycle (here accounts and
// ledger, taken in both orders) are red. Pipe the output
// to dot -Tsvg for a picture.
func ExampleWriteDOT() {
	lockorder.Reset()
	lockorder.Configure(lockorder.WithMode(lockorder.ModeCheck), lockorder.WithHandler(func(lockorder.Violation) {}))

	accounts, ledger := lockorder.NewMutex("accounts"), lockorder.NewMutex("ledger")
	journal := lockorder.NewMutex("journal")
	moveFunds(accounts, ledger, journal)
	reconcile(accounts, ledger)

	if err := lockorder.WriteDOT(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// digraph lockorder {
	// 	node [shape=box];
	// 	"accounts";
	// 	"journal";
	// 	"ledger";
	// 	"accounts" -> "journal" [label="lockorder_test.moveFunds example_telemetry_test.go:17"];
	// 	"accounts" -> "ledger" [label="lockorder_test.moveFunds example_telemetry_test.go:16", color=red, penwidth=2];
	// 	"ledger" -> "accounts" [label="lockorder_test.reconcile example_telemetry_test.go:26", color=red, penwidth=2];
	// 	"ledger" -> "journal" [label="lockorder_test.moveFunds example_telemetry_test.go:17"];
	// }
}

// A service can serve the wait profile next to net/http/pprof's profiles,
// for go tool pprof http://host/debug/syncwatch/waits.
func ExampleWriteWaitProfile() {
	http.HandleFunc("/debug/syncwatch/waits", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="waits.pb.gz"`)
		if err := lockorder.WriteWaitProfile(w); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}
