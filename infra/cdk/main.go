// Command cdk is sinew's CDK app: `npx cdk synth` / `cdk deploy` run it (cdk.json). It reads the
// settings from the CDK context, builds the stack from the one description of the deployment, runs
// cdk-nag's AwsSolutions checks on it and synthesizes. A missing function folder, a bad setting or
// an unacknowledged cdk-nag finding stops it with a message naming the cause. `go run . preflight
// <cdk deploy arguments>` checks a deploy before CloudFormation starts (check.sh deploy runs it).
package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"sinew/infra/cdk/preflight"
	"sinew/infra/cdk/stack"
	"sinew/internal/deploy"
)

// CtxStackName sets the stack's name, which prefixes its functions' and state machines' names.
const CtxStackName = "stackName"

func main() {
	// `go run . missing` lists the described functions whose folder is not written yet (check.sh).
	if len(os.Args) == 2 && os.Args[1] == "missing" {
		os.Exit(listMissing())
	}
	// `go run . preflight <cdk deploy arguments>` checks the deployment before CloudFormation
	// starts (check.sh deploy).
	if len(os.Args) >= 2 && os.Args[1] == "preflight" {
		os.Exit(runPreflight(os.Args[2:]))
	}
	os.Exit(run())
}

func listMissing() int {
	// The jsii runtime unpacks itself when the program starts, even here; Close removes it.
	defer jsii.Close()
	cwd, err := os.Getwd()
	if err == nil {
		var root string
		if root, err = stack.FindRoot(cwd); err == nil {
			var names []string
			for _, f := range deploy.Functions() {
				names = append(names, f.Name)
			}
			fmt.Println(strings.Join(stack.MissingFunctions(root, names), " "))
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "sinew:", err)
	return 1
}

// runPreflight reads the settings as the app will (cdk.json, cdk.context.json, then the -c
// values of args), finds the Region and the account as the CDK CLI will, and refuses what
// preflight.Run refuses.
func runPreflight(args []string) int {
	defer jsii.Close()
	values, profile := preflight.ParseArgs(args)
	all, err := preflight.LoadContext(".", values)
	if err != nil {
		fmt.Fprintln(os.Stderr, "preflight:", err)
		return 1
	}
	keys := slices.Sorted(maps.Keys(all))
	settings, err := stack.ParseSettings(func(k string) (any, bool) { v, ok := all[k]; return v, ok }, keys)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sinew: invalid settings:\n"+err.Error())
		return 1
	}
	name := "sinew"
	if v, ok := all[CtxStackName]; ok {
		name = fmt.Sprint(v)
	}
	ctx := context.Background()
	cli := preflight.CLI{Profile: profile}
	cli.Region = preflight.Region(ctx, os.Getenv, cli)
	err = preflight.Run(ctx, preflight.Input{Settings: settings, StackName: name, Region: cli.Region, Account: cli}, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "preflight: refused before CloudFormation starts:\n"+err.Error())
		return 1
	}
	return 0
}

func run() int {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	node := app.Node()
	get := func(k string) (any, bool) {
		v := node.TryGetContext(jsii.String(k))
		return v, v != nil
	}
	var keys []string
	if all, ok := node.GetAllContext(nil).(map[string]interface{}); ok {
		for k := range all {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	settings, err := stack.ParseSettings(get, keys)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sinew: invalid settings:\n"+err.Error())
		return 1
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sinew:", err)
		return 1
	}
	root, err := stack.FindRoot(cwd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sinew:", err)
		return 1
	}
	name := "sinew"
	if v, ok := get(CtxStackName); ok {
		name = fmt.Sprint(v)
	}
	props := stack.Props{Root: root, Settings: settings}
	// An environment-agnostic stack unless the CLI names one (a profile, or CDK_DEFAULT_*).
	if acct, region := os.Getenv("CDK_DEFAULT_ACCOUNT"), os.Getenv("CDK_DEFAULT_REGION"); acct != "" && region != "" {
		props.Env = &awscdk.Environment{Account: jsii.String(acct), Region: jsii.String(region)}
	}
	if _, err := stack.New(app, name, props); err != nil {
		fmt.Fprintln(os.Stderr, "sinew:", err)
		return 1
	}
	stack.ApplyChecks(app)
	app.Synth(nil)
	return 0
}
