// Command iamcheck is the IAM check (make iam-check).
//
// It evaluates every AWS request local mode recorded (SINEW_LOCAL_IAM_RECORD, package iamrec)
// against the policies of the synthesized stack (identity policies of each function's and state
// machine's role; key, function, queue, topic and bus policies on the resources), conditions
// included, with @cloud-copilot/iam-simulate (simulate.js beside this file), and prints
//
//	N AWS requests by F functions and S state machines allowed; K statements no request used
//
// then the statements no request used and every request denied, with the principal and the
// simulator's explanation. It exits 1 on a denial, 2 when it cannot check (no records, no
// template, a request it cannot evaluate).
//
//	go run ./infra/scripts/iamcheck -template infra/cdk/cdk.out -records dist/iam-records/unit,dist/iam-records/demo
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

func main() {
	template := flag.String("template", "infra/cdk/cdk.out", "the synthesized template, or the directory holding it alone (make cdk-test or make synth writes it)")
	records := flag.String("records", "dist/iam-records/unit,dist/iam-records/demo", "comma-separated directories of recorded requests; a missing one is skipped, none at all is an error")
	node := flag.String("node", "node", "the Node.js binary that runs simulate.js")
	star := flag.Bool("star-wildcard-only", false, `evaluate the actions AWS's Service Authorization Reference lists with no resource type (states:SendTask*) against Resource "*", as the reference says, instead of the state machine the recording names`)
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	code, err := run(os.Stdout, options{template: *template, records: strings.Split(*records, ","), node: *node, script: scriptPath(), starWildcardOnly: *star})
	if err != nil {
		fmt.Fprintln(os.Stderr, "iam-check:", err)
	}
	os.Exit(code)
}

// scriptPath is simulate.js beside this command's source.
func scriptPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "simulate.js")
}
