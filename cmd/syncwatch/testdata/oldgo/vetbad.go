//go:build vetbad

package keys

import "errors"

// asValue passes errors.As a value, not a pointer: go test's vet (its
// errorsas check) fails the build.
func asValue(err error) bool {
	var target error
	return errors.As(err, target)
}
