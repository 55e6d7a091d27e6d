package watchdog

// Look makes the timer's look at l now, on the calling goroutine, so a
// test can know a look happened after the event it caused.
func Look(l *Loop) { l.check() }
