//go:build linux

package gls

// sysMembarrier is membarrier's system call number on linux/amd64.
const sysMembarrier = 324
