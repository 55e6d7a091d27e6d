package tm

// Nothing here names sync.
func Nothing() {}
