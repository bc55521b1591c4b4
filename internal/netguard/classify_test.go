package netguard

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		addr    string
		refused bool
		why     string // a piece of the reason
	}{
		// Public addresses: the decision only; nothing here is ever dialed.
		{"8.8.8.8", false, ""},
		{"1.1.1.1", false, ""},
		{"93.184.215.14", false, ""},
		{"2606:4700:4700::1111", false, ""},
		{"::ffff:8.8.8.8", false, ""},
		{"64:ff9b::808:808", false, ""},                     // NAT64 of a public address
		{"2002:808:808::1", false, ""},                      // 6to4 of a public address
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false, ""}, // Teredo, client 8.8.8.8

		{"127.0.0.1", true, "loopback"},
		{"127.255.255.254", true, "loopback"},
		{"0.0.0.0", true, "unspecified"},
		{"0.1.2.3", true, "this network"},
		{"10.1.2.3", true, "private"},
		{"172.16.0.1", true, "private"},
		{"172.31.255.255", true, "private"},
		{"192.168.0.1", true, "private"},
		{"100.64.0.1", true, "carrier-grade NAT"},
		{"100.127.255.255", true, "carrier-grade NAT"},
		{"169.254.169.254", true, "metadata"},
		{"169.254.170.2", true, "metadata"},
		{"169.254.0.1", true, "link-local"},
		{"192.0.0.8", true, "IETF protocol"},
		{"192.0.2.1", true, "documentation"},
		{"198.51.100.1", true, "documentation"},
		{"203.0.113.1", true, "documentation"},
		{"198.18.0.1", true, "benchmarking"},
		{"198.19.255.255", true, "benchmarking"},
		{"192.88.99.1", true, "6to4 relay"},
		{"224.0.0.1", true, "multicast"},
		{"239.255.255.250", true, "multicast"},
		{"240.0.0.1", true, "reserved"},
		{"255.255.255.255", true, "broadcast"},
		{"::", true, "unspecified"},
		{"::1", true, "loopback"},
		{"::ffff:127.0.0.1", true, "IPv4-mapped form of 127.0.0.1, a loopback"},
		{"::ffff:10.0.0.1", true, "IPv4-mapped form of 10.0.0.1, a private"},
		{"::127.0.0.1", true, "IPv4-compatible"},
		{"::8.8.8.8", true, "IPv4-compatible"},
		{"64:ff9b::7f00:1", true, "NAT64 form of 127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", true, "NAT64 form of 169.254.169.254, the cloud metadata"},
		{"64:ff9b:1::1", true, "local-use NAT64"},
		{"2002:7f00:1::", true, "6to4 form of 127.0.0.1"},
		{"2002:c0a8:101::1", true, "6to4 form of 192.168.1.1"},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true, "Teredo form of 127.0.0.1"},
		{"2001:0:a00:1::f7f7:f7f7", true, "Teredo form (server) of 10.0.0.1"},
		{"2001:2::1", true, "IETF protocol"},
		{"2001:db8::1", true, "documentation"},
		{"3fff::1", true, "documentation"},
		{"100::1", true, "discard-only"},
		{"fc00::1", true, "unique-local"},
		{"fd00:ec2::254", true, "metadata"},
		{"fdff::1", true, "unique-local"},
		{"fe80::1", true, "link-local"},
		{"fe80::1%eth0", true, "link-local"},
		{"febf::1", true, "link-local"},
		{"fec0::1", true, "site-local"},
		{"ff02::1", true, "multicast"},
		{"ff05::2", true, "multicast"},
		{"4000::1", true, "global unicast"},
		{"1234::1", true, "global unicast"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			why, refused := Classify(netip.MustParseAddr(tt.addr))
			if refused != tt.refused {
				t.Fatalf("Classify(%s) refused = %v (%q), want %v", tt.addr, refused, why, tt.refused)
			}
			if !strings.Contains(why, tt.why) {
				t.Errorf("Classify(%s) reason = %q, want it to mention %q", tt.addr, why, tt.why)
			}
		})
	}
	if why, refused := Classify(netip.Addr{}); !refused || why == "" {
		t.Errorf("the zero Addr must be refused with a reason, got %v %q", refused, why)
	}
}

func TestParseHostIP(t *testing.T) {
	tests := []struct {
		host    string
		want    string // "" when not an IP
		numeric bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"[::1]", "::1", true},
		{"fe80::1%eth0", "fe80::1%eth0", true},
		{"2130706433", "127.0.0.1", true},
		{"0177.0.0.1", "127.0.0.1", true},
		{"0x7f.0.0.1", "127.0.0.1", true},
		{"0X7F.0.0.1", "127.0.0.1", true},
		{"0x7f000001", "127.0.0.1", true},
		{"017700000001", "127.0.0.1", true},
		{"127.1", "127.0.0.1", true},
		{"10.1", "10.0.0.1", true},
		{"192.168.257", "192.168.1.1", true},
		{"0", "0.0.0.0", true},
		{"0x", "0.0.0.0", true},
		{"127.0.0.1.", "127.0.0.1", true},
		{"4294967295", "255.255.255.255", true},
		{"4294967296", "", true},
		{"256.0.0.1", "", true},
		{"1.2.3.4.5", "", true},
		{"08.0.0.1", "", true}, // 8 is not an octal digit
		{"1.2.3.0x100", "", true},
		{"example.com", "", false},
		{"evil.test", "", false},
		{"1.2.3.example", "", false},
		{"0x7f.example", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, numeric, ok := ParseHostIP(tt.host)
			if numeric != tt.numeric {
				t.Errorf("numeric = %v, want %v", numeric, tt.numeric)
			}
			if tt.want == "" {
				if ok {
					t.Errorf("ParseHostIP(%q) = %s, want no IP", tt.host, got)
				}
				return
			}
			if !ok || got.String() != tt.want {
				t.Errorf("ParseHostIP(%q) = %s, %v, want %s", tt.host, got, ok, tt.want)
			}
		})
	}
}

func TestParseAllowlist(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
		allows  []string // host|ip|port triples that must be allowed
		refuses []string
	}{
		{in: "", refuses: []string{"|127.0.0.1|80"}},
		{in: " , ,", refuses: []string{"|10.0.0.1|80"}},
		{in: "10.0.0.0/8", allows: []string{"|10.9.9.9|1", "|::ffff:10.0.0.1|443"}, refuses: []string{"|11.0.0.1|80"}},
		{in: "10.1.2.3/8", allows: []string{"|10.200.0.1|80"}},
		{in: "10.1.2.3", allows: []string{"|10.1.2.3|9"}, refuses: []string{"|10.1.2.4|9"}},
		{in: "fd00::/8, 127.0.0.1:8080", allows: []string{"|fd12::1|80", "|127.0.0.1|8080", "x.test|127.0.0.1|8080"}, refuses: []string{"|127.0.0.1|8081", "|fe80::1|80"}},
		{in: "[::1]:9000", allows: []string{"|::1|9000"}, refuses: []string{"|::1|9001"}},
		{in: "Svc.Internal.:443", allows: []string{"svc.internal|10.0.0.5|443", "SVC.internal.|10.0.0.6|443"}, refuses: []string{"svc.internal|10.0.0.5|80", "other.internal|10.0.0.5|443"}},
		{in: "2130706433:80", allows: []string{"|127.0.0.1|80"}},
		{in: "localhost", wantErr: "give a CIDR, an IP, or host:port"},
		{in: "10.0.0.0/33", wantErr: "not a valid CIDR"},
		{in: "127.0.0.1:0", wantErr: "port"},
		{in: "127.0.0.1:http", wantErr: "port"},
		{in: "127.0.0.1:70000", wantErr: "port"},
		{in: ":80", wantErr: "not a valid host"},
		{in: "10.0.0.0/8,bad entry", wantErr: `allow entry "bad entry"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			a, err := ParseAllowlist(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			check := func(triple string, want bool) {
				parts := strings.Split(triple, "|")
				port, err := strconv.ParseUint(parts[2], 10, 16)
				if err != nil {
					t.Fatal(err)
				}
				if got := a.Allows(parts[0], netip.MustParseAddr(parts[1]), uint16(port)); got != want {
					t.Errorf("Allows(%s) = %v, want %v", triple, got, want)
				}
			}
			for _, s := range tt.allows {
				check(s, true)
			}
			for _, s := range tt.refuses {
				check(s, false)
			}
		})
	}
}
