package debughttp

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed page.tmpl
var pageText string

var page = template.Must(template.New("page").Parse(pageText))

// pageData is what the page template renders.
type pageData struct {
	*State
	Program   string
	Refresh   int // seconds; 0 for none
	TraceMode bool
	SVG       template.HTML
}

// Reasons says why the process is unhealthy: "1 stalled loop, 2
// deadlocks".
func (d pageData) Reasons() string {
	var parts []string
	for _, r := range []struct {
		n    int
		what string
	}{{len(d.Health.Stalled), "stalled loop"}, {len(d.Health.Deadlocks), "deadlock"}} {
		switch {
		case r.n == 1:
			parts = append(parts, "1 "+r.what)
		case r.n > 1:
			parts = append(parts, strconv.Itoa(r.n)+" "+r.what+"s")
		}
	}
	return strings.Join(parts, ", ")
}

// View returns the live view's handler: an HTML page (server-rendered,
// readable without JavaScript, reloading itself every few seconds: see
// [WithRefresh]) of everything in [State], with the lock-order graph
// drawn as SVG and its reported cycles in red; with ?format=json, the
// same [State] as JSON. Mount it where you mount net/http/pprof's
// handlers; nothing is registered by importing this package:
//
//	mux.Handle("/debug/syncwatch", debughttp.View())
//
// Each request collects the state afresh (see [Collect]); its "Check for
// leaked goroutines" link adds "?leaks=1", which runs a leak check (see
// [LeakParam]). It is safe for
// concurrent use.
func View(opts ...Option) http.Handler {
	c := newConfig(opts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := collect(c)
		st.Health.Leaks = leaksAsked(r)
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.Encode(st)
			return
		}
		refresh := int(c.refresh / time.Second)
		if s := r.URL.Query().Get("refresh"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n >= 0 {
				refresh = n
			}
		}
		data := pageData{
			State:     st,
			Program:   filepath.Base(os.Args[0]),
			Refresh:   refresh,
			TraceMode: st.Mode == "trace",
			SVG:       renderSVG(st.LockGraph),
		}
		var buf bytes.Buffer
		if err := page.Execute(&buf, data); err != nil {
			http.Error(w, "debughttp: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(buf.Bytes())
	})
}
