// SPDX-License-Identifier: MIT
// exits.go: reads a file (a call nocache's supervisor serves), says so,
// keeps a goroutine busy, and exits with status 3 once a line comes on its
// standard input: a Go program's exit with more than one thread.
package main

import (
	"bufio"
	"fmt"
	"os"
	"time"
)

func main() {
	b := make([]byte, 16)
	f, err := os.Open(os.Args[1])
	if err == nil {
		f.Read(b)
		f.Close()
	}
	go func() {
		for {
			time.Sleep(time.Millisecond)
		}
	}()
	fmt.Println("read")
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(3)
}
