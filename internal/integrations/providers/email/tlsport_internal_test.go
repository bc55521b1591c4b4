package email

import "testing"

// Port 465 speaks implicit TLS unless another port is named; every other port uses STARTTLS.
func TestImplicitTLSPort(t *testing.T) {
	tests := []struct {
		env  Env
		port int32
		want bool
	}{
		{Env{}, 465, true},
		{Env{}, 587, false},
		{Env{}, 25, false},
		{Env{ImplicitTLSPort: 10465}, 10465, true},
		{Env{ImplicitTLSPort: 10465}, 465, false},
	}
	for _, tc := range tests {
		if got := tc.env.implicitTLS(tc.port); got != tc.want {
			t.Errorf("ImplicitTLSPort %d, port %d: implicit TLS %v, want %v", tc.env.ImplicitTLSPort, tc.port, got, tc.want)
		}
	}
}
