// SPDX-License-Identifier: MIT
// commit.go -- fsyncs from main.commit right after a deeper call has
// returned: main.stamp's frames, a SHA-256 at the bottom, leave their return
// addresses on the stack below main.commit's, where the frames of f.Sync's
// way to the system call do not all overwrite them.  Whoever takes the
// stack's words for its frames names main.stamp; the Go runtime's own
// tables name main.commit (tests/py/test_syncstat_call_sites.py).
// Usage: commit FILE N
package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"strconv"
)

var sink [32]byte

//go:noinline
func stamp(n int, b []byte) {
	var local [8]byte
	copy(local[:], b)
	if n > 0 {
		stamp(n-1, local[:])
		return
	}
	sink = sha256.Sum256(local[:])
}

//go:noinline
func commit(f *os.File, b []byte) {
	stamp(6, b)
	if err := f.Sync(); err != nil {
		panic(err)
	}
}

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		commit(f, []byte("record"))
	}
	fmt.Println("ok")
}
