//go:build sizefmt

package main

import "fmt"

// report prints the total with fmt.
func report(total int) { fmt.Println(total) }
