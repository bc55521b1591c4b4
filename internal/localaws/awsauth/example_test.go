package awsauth_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"sinew/internal/localaws/awsauth"
)

func ExampleVerifier_Wrap() {
	dataDir, err := os.MkdirTemp("", "local-mode")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dataDir)

	// Local mode makes the key once per data directory and hands it to its clients (Env).
	creds, err := awsauth.LoadOrCreate(dataDir)
	if err != nil {
		log.Fatal(err)
	}
	verifier := awsauth.New(creds, awsauth.Options{Region: "us-east-1", Logger: slog.New(slog.DiscardHandler)})

	// A stand-in KMS endpoint; it still reads the body the Verifier checked.
	endpoint := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Printf("KMS got %s\n", body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = io.WriteString(w, `{"Keys":[],"Truncated":false}`)
	})
	srv := httptest.NewServer(verifier.Wrap(endpoint))
	defer srv.Close()

	// A client signing with the data directory's key is served.
	client := kms.New(kms.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(creds.AccessKeyID, creds.SecretAccessKey, ""),
		BaseEndpoint: aws.String(srv.URL),
	})
	if _, err := client.ListKeys(context.Background(), &kms.ListKeysInput{}); err != nil {
		log.Fatal(err)
	}

	// Anything unsigned, such as a web page's POST, is refused before the endpoint sees it.
	resp, err := http.Post(srv.URL, "application/x-amz-json-1.1", strings.NewReader(`{}`))
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	// Output:
	// KMS got {}
	// 400 MissingAuthenticationTokenException
}
