package stack

// Symbolized returns how many stacks have been symbolized.
func Symbolized() int64 { return symbolized.Load() }
