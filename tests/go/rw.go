// SPDX-License-Identifier: MIT
// rw.go -- a Go reader or writer (the Go runtime's own read and write system
// calls, past any preloaded library), for nocache through the supervisor.
// Usage: rw read FILE | rw write FILE MIB
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	buf := make([]byte, 65536)
	if os.Args[1] == "read" {
		f, err := os.Open(os.Args[2])
		if err != nil {
			panic(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf)
		if err != nil {
			panic(err)
		}
		fmt.Println(n)
		return
	}
	mib, _ := strconv.Atoi(os.Args[3])
	f, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	for i := 0; i < mib*16; i++ {
		if _, err := f.Write(buf); err != nil {
			panic(err)
		}
	}
	if err := f.Close(); err != nil {
		panic(err)
	}
	fmt.Println(mib << 20)
}
