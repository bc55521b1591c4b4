// Package secretstest helps tests prove that secret values leak nowhere.
//
// It offers a local KMS on loopback for the envelope sealer, a dump of a table's raw items, a log
// capture, and AssertNoLeak, which searches any set of texts (API answers, log lines, execution
// histories, raw items) for values.
package secretstest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	awsv2 "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awskms "github.com/aws/aws-sdk-go-v2/service/kms"

	localkms "sinew/internal/localaws/kms"
	"sinew/internal/secrets"
	"sinew/internal/secrets/envelope"
)

// KMS is local mode's KMS served on loopback for one test.
type KMS struct {
	Service *localkms.Service
	Client  *awskms.Client
	URL     string
	KeyID   string // the alias sinew's sealer uses
}

// StartKMS serves a fresh local KMS (its key file in a temp dir) on 127.0.0.1 until the test ends.
func StartKMS(t testing.TB) *KMS {
	t.Helper()
	svc, err := localkms.Open(localkms.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	c := awskms.New(awskms.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: awsv2.String(srv.URL),
		HTTPClient:   srv.Client(),
	})
	return &KMS{Service: svc, Client: c, URL: srv.URL, KeyID: localkms.DefaultAlias}
}

// Envelope is the KMS envelope sealer over k's key.
func (k *KMS) Envelope(t testing.TB) *envelope.Envelope {
	t.Helper()
	e, err := envelope.NewEnvelope(k.Client, k.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Logs captures log lines (JSON) for a test; its Logger writes through the redacting handler of r
// when r is given, as the executors' loggers do.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String is everything logged so far.
func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger logs at debug level to l, through r's handler when r is not nil.
func (l *Logs) Logger(r *secrets.Redactor) *slog.Logger {
	var h slog.Handler = slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})
	if r != nil {
		h = r.Handler(h)
	}
	return slog.New(h)
}

// ScanAPI is the Scan of a DynamoDB client.
type ScanAPI interface {
	Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// DumpTable is every raw item of table as JSON lines (binary attributes as base64, as the
// attributevalue package decodes them), for searching.
func DumpTable(t testing.TB, db ScanAPI, table string) string {
	t.Helper()
	var b strings.Builder
	in := &dynamodb.ScanInput{TableName: &table, ConsistentRead: awsv2.Bool(true)}
	for {
		out, err := db.Scan(context.Background(), in)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		for _, it := range out.Items {
			var m map[string]any
			if err := attributevalue.UnmarshalMap(it, &m); err != nil {
				t.Fatalf("decode an item of %s: %v", table, err)
			}
			j, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(j)
			b.WriteByte('\n')
		}
		if len(out.LastEvaluatedKey) == 0 {
			return b.String()
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Forms are the encodings of a value searched for besides itself: JSON-escaped (inside a JSON
// document), base64 and base64url (a binary attribute, a payload), URL-escaped (a query or a form
// body). A value inside a larger binary blob encodes differently by its offset modulo 3, so each
// base64 alphabet gives three forms, one per alignment ("base64@0", "@1", "@2"): the characters
// that encode only the value's bytes at that alignment.
func Forms(v string) map[string]string {
	j, _ := json.Marshal(v)
	forms := map[string]string{
		"plain": v,
		"json":  string(j[1 : len(j)-1]),
		"url":   url.QueryEscape(v),
	}
	for name, enc := range map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.RawURLEncoding} {
		for k := range 3 {
			forms[fmt.Sprintf("%s@%d", name, k)] = alignedBase64(enc, []byte(v), k)
		}
	}
	return forms
}

// alignedBase64 is the part of the base64 of v, placed k bytes past a 3-byte boundary, that
// depends on v's bytes alone: the leading characters shared with the bytes before it and the
// trailing ones shared with the bytes after it are left out.
func alignedBase64(enc *base64.Encoding, v []byte, k int) string {
	buf := append(make([]byte, k), v...)
	buf = buf[:len(buf)/3*3]
	s := enc.EncodeToString(buf)
	skip := [3]int{0, 2, 3}[k] // characters holding bits of the k bytes before v
	if len(s) <= skip {
		return ""
	}
	return s[skip:]
}

// Leak is one value found in one haystack.
type Leak struct {
	Haystack string
	Value    int // the value's index in the list searched for (never the value itself)
	Form     string
	Offset   int
}

// FindLeaks searches every haystack for every value in every form of Forms. A short value gives
// false hits in base64 form: use values of 12 characters or more.
func FindLeaks(haystacks map[string]string, values []string) []Leak {
	var out []Leak
	names := make([]string, 0, len(haystacks))
	for n := range haystacks {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := haystacks[n]
		for i, v := range values {
			forms := Forms(v)
			keys := make([]string, 0, len(forms))
			for f := range forms {
				keys = append(keys, f)
			}
			sort.Strings(keys)
			seen := map[string]bool{}
			for _, f := range keys {
				form := forms[f]
				if form == "" || seen[form] {
					continue
				}
				seen[form] = true
				if off := strings.Index(h, form); off >= 0 {
					out = append(out, Leak{Haystack: n, Value: i, Form: f, Offset: off})
				}
			}
		}
	}
	return out
}

// AssertNoLeak fails t for every value found in any haystack (see FindLeaks), naming the haystack,
// the value's index, the form and the offset, and printing the text around it with the value
// itself masked, so the failure output does not leak it either.
func AssertNoLeak(t testing.TB, haystacks map[string]string, values []string) {
	t.Helper()
	if len(values) == 0 {
		t.Fatal("AssertNoLeak: no values to search for")
	}
	// The context printed around a hit has every form of every value masked, so a failure report
	// carries none of them either.
	var pairs []string
	for i, v := range values {
		for _, f := range Forms(v) {
			if f != "" {
				pairs = append(pairs, f, fmt.Sprintf("<VALUE#%d>", i))
			}
		}
	}
	mask := strings.NewReplacer(pairs...)
	for _, l := range FindLeaks(haystacks, values) {
		h := haystacks[l.Haystack]
		form := Forms(values[l.Value])[l.Form]
		lo, hi := max(0, l.Offset-80), min(len(h), l.Offset+len(form)+80)
		t.Errorf("secret value #%d found in %s (%s form) at offset %d: ...%s...", l.Value, l.Haystack, l.Form, l.Offset, mask.Replace(h[lo:hi]))
	}
}

// Haystacks is a convenience to build AssertNoLeak's map from labelled texts.
type Haystacks map[string]string

// Add records text under name, appending when the name is used again.
func (h Haystacks) Add(name string, text string) {
	if prev, ok := h[name]; ok {
		h[name] = prev + "\n" + text
		return
	}
	h[name] = text
}

// Addf records a formatted text.
func (h Haystacks) Addf(name, format string, args ...any) { h.Add(name, fmt.Sprintf(format, args...)) }

// KeyVersion reads the key version out of a local-KMS ciphertext inside an envelope blob: local
// KMS's layout is format (1) | key id (16) | version (4, big endian) | ... (localaws/kms/blob.go).
func KeyVersion(t testing.TB, sealed []byte) uint32 {
	t.Helper()
	kb, err := envelope.KeyBlob(sealed)
	if err != nil {
		t.Fatal(err)
	}
	if len(kb) < 21 {
		t.Fatalf("key blob of %d bytes", len(kb))
	}
	return binary.BigEndian.Uint32(kb[17:21])
}
