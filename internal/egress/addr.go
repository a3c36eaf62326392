package egress

import (
	"net/netip"
	"syscall"
)

// privateRanges are the addresses a request reaches only under a rule with
// AllowPrivate: everything that is not an ordinary public unicast address.
// IPv4-mapped IPv6 addresses are unmapped before the check, and the IPv4
// address inside a NAT64 or 6to4 address is checked as well.
var privateRanges = prefixes(
	// IPv4
	"0.0.0.0/8",        // "this network"; 0.0.0.0 reaches the local host on Linux
	"10.0.0.0/8",       // private
	"100.64.0.0/10",    // carrier-grade NAT (and Alibaba's metadata, 100.100.100.200)
	"127.0.0.0/8",      // loopback
	"169.254.0.0/16",   // link-local, and the cloud metadata service 169.254.169.254
	"172.16.0.0/12",    // private
	"192.0.0.0/24",     // IETF protocol assignments (and Oracle's old metadata, 192.0.0.192)
	"192.0.2.0/24",     // documentation
	"192.88.99.0/24",   // 6to4 relay anycast
	"192.168.0.0/16",   // private
	"198.18.0.0/15",    // benchmarking, often used inside networks
	"198.51.100.0/24",  // documentation
	"203.0.113.0/24",   // documentation
	"224.0.0.0/4",      // multicast
	"240.0.0.0/4",      // reserved, and broadcast
	"168.63.129.16/32", // Azure's platform endpoint (WireServer)
	// IPv6
	"::/96",           // unspecified, loopback, IPv4-compatible
	"::ffff:0:0:0/96", // IPv4-translated
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard-only
	"2001::/23",       // IETF protocol assignments, Teredo among them
	"2001:db8::/32",   // documentation
	"3fff::/20",       // documentation
	"fc00::/7",        // unique local, and AWS's metadata service fd00:ec2::254
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// isPrivate reports whether a is an address that only a rule with
// AllowPrivate may reach. An invalid address counts as private, so a
// failure to parse never opens a way through.
func isPrivate(a netip.Addr) bool {
	a = a.WithZone("").Unmap() // a Prefix never contains a zoned address
	if !a.IsValid() {
		return true
	}
	for _, p := range privateRanges {
		if p.Contains(a) {
			return true
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			return isPrivate(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(a):
			return isPrivate(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	return false
}

// controlFor returns a net.Dialer Control function: the last check, on the
// exact address the socket is about to connect to.
func controlFor(host string, allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &Denied{Permission: "address " + quote(address) + " for host " + quote(host)}
		}
		if !allowPrivate && isPrivate(ap.Addr()) {
			return privateDenied(ap.Addr(), host)
		}
		return nil
	}
}

func privateDenied(a netip.Addr, host string) *Denied {
	return &Denied{Permission: "private address " + a.WithZone("").Unmap().String() + " for host " + quote(host)}
}
