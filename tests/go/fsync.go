// SPDX-License-Identifier: MIT
// fsync.go -- a Go program syncing a file its own way: the Go runtime makes
// the fsync system call itself, past any preloaded library.
// Usage: fsync FILE N
package main

import (
	"fmt"
	"os"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi(os.Args[2])
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	for i := 0; i < n; i++ {
		if _, err := f.WriteString("record\n"); err != nil {
			panic(err)
		}
		if err := f.Sync(); err != nil {
			panic(err)
		}
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	g, err := os.OpenFile(os.Args[1]+".sync", os.O_CREATE|os.O_WRONLY|os.O_SYNC, 0o644)
	if err != nil {
		panic(err)
	}
	g.WriteString("synced write\n")
	g.Close()
	fmt.Println("ok")
}
