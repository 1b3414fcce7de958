// Command benchtool measures srt against baselines taken in the same run and
// prints ratios (see scripts/bench and docs/benchmarks.md). It never asserts
// timings: it reports them.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	srt := flag.String("srt", "srt", "srt binary to measure")
	part := flag.String("part", "startup", "which part to run: startup")
	runs := flag.Int("runs", 30, "runs per measurement")
	flag.Parse()
	var err error
	switch *part {
	case "startup":
		err = startup(*srt, *runs)
	default:
		err = fmt.Errorf("unknown part %q", *part)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchtool: %v\n", err)
		os.Exit(1)
	}
}
