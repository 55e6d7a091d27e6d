//go:build !syncwatch_off

package lockorder_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/syncwatch/syncwatch/lockorder"
)

func TestTestName(t *testing.T) {
	for fn, want := range map[string]string{
		"example.com/bank_test.TestTransfers":                "TestTransfers",
		"example.com/bank_test.TestTransfers.func1":          "TestTransfers",
		"example.com/bank_test.TestTransfers.func1.gowrap2":  "TestTransfers",
		"example.com/bank_test.TestTransfers.transfer.func1": "", // inlined into the test, no test
		"example.com/bank.Transfer":                          "",
		"example.com/bank_test.Testify":                      "",
		"example.com/bank_test.BenchmarkX":                   "BenchmarkX",
		"main.main":                                          "",
		"example.com/x.(*T).TestMethod":                      "TestMethod", // a testify suite's
		"google.golang.org/grpc.s.TestUpdate.func1":          "TestUpdate", // run by grpctest.RunSubTests
		"example.com/x.(*T).helper":                          "",
		"example.com/x.(*T).TestMethod.helper.func1":         "",
	} {
		assert.Equal(t, want, lockorder.FuncTestName(fn, "bank_test.go"), fn)
	}
	assert.Empty(t, lockorder.FuncTestName("example.com/bank.TestLike", "bank.go"), "not in a _test.go file")
}
