package barrier

// SetGiveUpHook makes every waiter that noticed the end of its wait (its
// context or timeout) call f before it looks at its generation, so that a
// test can complete the generation in between. It returns a function that
// removes the hook.
func SetGiveUpHook(f func()) (restore func()) {
	testHookGiveUp.Store(&f)
	return func() { testHookGiveUp.Store(nil) }
}

// MaxErrorText bounds the length of BrokenError.Error's text.
const MaxErrorText = maxErrorText

// MaxAttrRanks bounds the ranks a list-of-ranks span attribute holds.
const MaxAttrRanks = maxAttrRanks
