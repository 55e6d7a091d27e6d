package lockorder

import "fmt"

// Mode says how much checking lockorder does.
type Mode int32

const (
	// ModeOff makes every lock a plain sync lock plus one atomic load;
	// an uncontended Mutex Lock or Unlock is inlined into its caller.
	ModeOff Mode = iota
	// ModeTrace keeps no order graph; it only times contended lock waits
	// and reports the slow ones. It is meant for production.
	ModeTrace
	// ModeCheck tracks which locks each goroutine holds, keeps the
	// lock-order graph and reports every violation. It is the default
	// under go test.
	ModeCheck
)

// String returns "off", "trace" or "check".
func (m Mode) String() string {
	switch m {
	case ModeOff:
		return "off"
	case ModeTrace:
		return "trace"
	case ModeCheck:
		return "check"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode parses "off", "trace" or "check", the values of the
// SYNCWATCH_MODE environment variable.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "off":
		return ModeOff, nil
	case "trace":
		return ModeTrace, nil
	case "check":
		return ModeCheck, nil
	}
	return 0, fmt.Errorf("lockorder: SYNCWATCH_MODE=%q: want off, trace or check", s)
}
