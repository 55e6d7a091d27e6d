//go:build syncwatch_off

package lockorder

// SetClassIfNew does nothing: the syncwatch_off build tag removed the
// classes.
func (m *Mutex) SetClassIfNew(name string) {}

// SetClassIfNew does nothing: the syncwatch_off build tag removed the
// classes.
func (m *RWMutex) SetClassIfNew(name string) {}
