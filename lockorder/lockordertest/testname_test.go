package lockordertest

import "testing"

func TestTestName(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/bank_test.TestTransfers":               "TestTransfers",
		"example.com/bank_test.TestTransfers.func1":         "TestTransfers",
		"example.com/bank_test.TestTransfers.func1.gowrap2": "TestTransfers",
		"example.com/bank.Transfer":                         "",
		"example.com/bank_test.Testify":                     "",
		"example.com/bank_test.BenchmarkX":                  "BenchmarkX",
		"main.main":                                         "",
		"example.com/x.(*T).TestMethod":                     "",
	} {
		if got := testName(fn); got != want {
			t.Errorf("testName(%q) = %q, want %q", fn, got, want)
		}
	}
}
