// Command hubctl is the event streaming hub and its every tool.
package main

import (
	"os"

	"github.com/hubctl/hubctl/internal/cli"
)

func main() { os.Exit(cli.Main()) }
