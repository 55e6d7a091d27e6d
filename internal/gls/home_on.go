//go:build !syncwatch_awayhome

package gls

// homeSkip is how many slots past its home a goroutine's probe window
// starts (see claim). 0: a state goes home when it can. The test-only
// tag syncwatch_awayhome makes it 1 (home_away.go).
const homeSkip = 0
