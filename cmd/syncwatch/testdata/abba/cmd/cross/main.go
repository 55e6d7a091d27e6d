// Command cross makes two transfers that cross, one after the other.
package main

import (
	"fmt"
	"os"

	bank "example.com/abba"
)

func main() {
	var a, b bank.Account
	bank.Transfer(&a, &b, 1)
	bank.Transfer(&b, &a, 1)
	fmt.Println("done", os.Args[1:])
}
