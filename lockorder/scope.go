package lockorder

// ScopeName is the instrumentation scope of lockorder's tracer and meter.
const ScopeName = "github.com/syncwatch/syncwatch/lockorder"

// Version is the syncwatch version reported as the instrumentation version.
const Version = "0.1.0"

// ViolationError is the error recorded on a violation's span when the
// reporter supplied no typed error of its own.
type ViolationError struct {
	Kind    Kind
	Message string
}

// Error returns "kind: message".
func (e *ViolationError) Error() string { return string(e.Kind) + ": " + e.Message }

// ErrorType returns the violation kind, for telemetry's error.type.
func (e *ViolationError) ErrorType() string { return string(e.Kind) }
