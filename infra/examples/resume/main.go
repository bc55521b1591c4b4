// Command resume answers a paused function-tool call with the AWS SDK for Go, as a client of
// sinew does: SendTaskSuccess with the call's task token. It finds Step Functions as every AWS
// SDK does (AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_SFN for local mode, else AWS itself).
//
//	go run ./infra/examples/resume TASK_TOKEN '{"answer": 42}'
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: resume TASK_TOKEN OUTPUT_JSON")
		os.Exit(2)
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err == nil {
		_, err = sfn.NewFromConfig(cfg).SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{
			TaskToken: aws.String(os.Args[1]), Output: aws.String(os.Args[2])})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "resume:", err)
		os.Exit(1)
	}
	fmt.Println("answered")
}
