// Command pictures draws each state machine of statemachines/ as an SVG picture beside its
// definition (statemachines/<name>.svg), laid out as local mode's console lays it out: `make
// pictures`. With -check it writes nothing and fails naming each picture that is not what it would
// draw.
package main

import (
	"flag"
	"fmt"
	"os"

	"sinew/internal/console"
)

func main() {
	dir := flag.String("dir", "statemachines", "the directory of *.asl.json definitions; pictures are written beside them")
	check := flag.Bool("check", false, "compare the pictures with fresh drawings instead of writing them")
	flag.Parse()
	pics, err := console.Pictures(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pictures:", err)
		os.Exit(1)
	}
	stale := 0
	for _, p := range pics {
		if *check {
			if old, err := os.ReadFile(p.Path); err != nil || string(old) != string(p.SVG) {
				fmt.Fprintf(os.Stderr, "%s is not what its definition draws: run make pictures\n", p.Path)
				stale++
			}
			continue
		}
		if err := os.WriteFile(p.Path, p.SVG, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "pictures:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", p.Path)
	}
	if stale > 0 {
		os.Exit(1)
	}
}
