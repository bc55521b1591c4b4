package mailgun

import "encoding/base64"

// basic is the HTTP Basic credential user:password, base64-encoded.
func basic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
