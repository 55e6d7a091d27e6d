package ledger

import "testing"

func TestTransfer(t *testing.T) {
	a, b := &Account{}, &Account{}
	Transfer(a, b, 1)
	Transfer(b, a, 1)
}

func TestAudit(t *testing.T) {
	a, b := &Account{}, &Account{}
	Audit(a, b)
	Audit(b, a)
}
