// SPDX-License-Identifier: MIT
// run.go -- a Go program that starts another (os/exec: the Go runtime's own
// fork and exec, past any preloaded library) and exits with its status.
// Usage: run PROGRAM [ARG]...
package main

import (
	"os"
	"os/exec"
)

func main() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if e, ok := err.(*exec.ExitError); ok {
			os.Exit(e.ExitCode())
		}
		panic(err)
	}
}
