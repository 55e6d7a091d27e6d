//go:build syncwatch_awayhome

package gls

// homeSkip, under the test-only tag syncwatch_awayhome, puts every state
// away from its home slot: claim's window starts one slot past home, so
// Home and Mine always miss and every caller's fallback runs. The window
// keeps its size; findSlot looks one slot further.
const homeSkip = 1
