package harness

// VerifyTestMain runs the tests and exits, as goleak's does.
func VerifyTestMain(m interface{ Run() int }, opts ...any) { _ = m.Run() }

// Direct takes the *testing.M itself: it is left alone.
func Direct(m interface{ Run() int }) int { return m.Run() }
