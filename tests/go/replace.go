// SPDX-License-Identifier: MIT
// replace.go -- tests/c/transact.c's "good" and "bad" in Go (the Go
// runtime's own openat, write, fsync and renameat, past any preloaded
// library): N times, data.tmp holds "record 1" .. "record K", "end K", is
// renamed over data, and "committed K" is printed; good fsyncs data.tmp
// before the rename and the directory after it, bad neither.
// Usage: replace good|bad N
package main

import (
	"fmt"
	"os"
	"strconv"
)

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func replace(k int, durable bool) {
	f, err := os.Create("data.tmp")
	check(err)
	for i := 1; i <= k; i++ {
		_, err = f.WriteString(fmt.Sprintf("record %d\n", i))
		check(err)
	}
	_, err = f.WriteString(fmt.Sprintf("end %d\n", k))
	check(err)
	if durable {
		check(f.Sync())
	}
	check(f.Close())
	check(os.Rename("data.tmp", "data"))
	if durable {
		d, err := os.Open(".")
		check(err)
		check(d.Sync())
		check(d.Close())
	}
}

func main() {
	n, err := strconv.Atoi(os.Args[2])
	check(err)
	for k := 1; k <= n; k++ {
		replace(k, os.Args[1] == "good")
		fmt.Printf("committed %d\n", k)
	}
}
