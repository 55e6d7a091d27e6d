package bank

import "testing"

var checking, savings Account

func TestToSavings(t *testing.T) { Transfer(&checking, &savings, 1) }

func TestToChecking(t *testing.T) { Transfer(&savings, &checking, 1) }
