//go:build linux

package gls

// sysMembarrier is membarrier's system call number on linux/arm64.
const sysMembarrier = 283
