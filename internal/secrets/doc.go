// Package secrets keeps setup secrets out of every place a person or a log can read.
//
// It holds the KMS envelope Sealer the store seals setup with (package envelope), the resolution of
// developer-secret references ({"secret": "NAME"} and Julep's "$ secrets.NAME") inside the
// executors, a slog handler that redacts known secret values as a second line of defence, and the
// rotation of every sealed value to the key's newest version.
//
// Setup values are secrets wherever they are written: metadata setup, a tool's own
// integration.setup, developer secrets (PUT /secrets/{name}). They are stored sealed (envelope
// encryption under a KMS key of their own, bound to an encryption context naming the developer and
// the value's place; the table as a whole is encrypted at rest with another key), opened only
// inside the integration and apicall executors (only their roles may decrypt), and never appear in
// a state machine's input, output or history, a log line, an error message or an API response:
// responses show the keys with the value "<redacted>", and writing "<redacted>" back keeps the
// stored value. Local mode runs the same code against its KMS stand-in (AWS_ENDPOINT_URL_KMS).
package secrets
