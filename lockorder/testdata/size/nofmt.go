//go:build !sizefmt

package main

import "os"

// report writes the total in decimal, without fmt.
func report(total int) {
	var buf [20]byte
	i := len(buf) - 1
	buf[i] = '\n'
	for {
		i--
		buf[i] = byte('0' + total%10)
		total /= 10
		if total == 0 {
			break
		}
	}
	os.Stdout.Write(buf[i:])
}
