// Command gen writes catalogue.json, the integration catalogue of package schemas, from the registry
// of every provider (package all): run by `go generate ./internal/integrations/schemas`.
package main

import (
	"fmt"
	"os"

	"sinew/internal/integrations/all"
)

func main() {
	b, err := all.Stored()
	if err == nil {
		err = os.WriteFile("catalogue.json", b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
