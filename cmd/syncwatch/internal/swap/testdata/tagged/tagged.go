package tagged

// Nothing here names sync.
func Nothing() {}
