//go:build syncwatch_off

package lockorder

// SetClassIfNew does nothing: the syncwatch_off build tag removed the
// classes.
func (m *Mutex) SetClassIfNew(name string) {}

// SetClassIfNew does nothing: the syncwatch_off build tag removed the
// classes.
func (m *RWMutex) SetClassIfNew(name string) {}

// SetNameIfNew does nothing: the syncwatch_off build tag removed the
// names.
func (m *Mutex) SetNameIfNew(name string) {}

// SetNameIfNew does nothing: the syncwatch_off build tag removed the
// names.
func (m *RWMutex) SetNameIfNew(name string) {}
