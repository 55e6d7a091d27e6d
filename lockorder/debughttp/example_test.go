//go:build !syncwatch_off

package debughttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/syncwatch/syncwatch/lockorder/debughttp"
	"github.com/syncwatch/syncwatch/lockorder/watchdog"
)

// Mount the health check and the live view, as net/http/pprof's handlers
// are mounted: nothing is registered by importing the package.
func Example() {
	loop := watchdog.New("inference", watchdog.WithBound(30*time.Second))
	defer loop.Close()

	mux := http.NewServeMux()
	mux.Handle("/healthz", debughttp.Health())
	mux.Handle("/debug/syncwatch", debughttp.View())
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 {"status":"ok"}
}

// CheckHealth is the health check's answer, for a program's own probe.
func ExampleCheckHealth() {
	h := debughttp.CheckHealth()
	fmt.Println(h.Status, h.Healthy())
	// Output: ok true
}
