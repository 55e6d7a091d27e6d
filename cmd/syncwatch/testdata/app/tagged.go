//go:build apptag

package app

import "sync"

// Tagged exists under the apptag build tag.
var Tagged sync.RWMutex
