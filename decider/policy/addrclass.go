package policy

import "net/netip"

// AddrClass names why a resolved address was refused; the phrase is what a
// refusal reports ("resolved to <class>"), never the address itself.
type AddrClass string

// The classes, in the priority order a multi-address refusal lists them.
const (
	ClassDenyListed    AddrClass = "a deny-listed address"
	ClassLoopback      AddrClass = "a loopback address"
	ClassUnspecified   AddrClass = "an unspecified address"
	ClassLinkLocal     AddrClass = "a link-local address"
	ClassMulticast     AddrClass = "a multicast address"
	ClassBroadcast     AddrClass = "the broadcast address"
	ClassCloudMetadata AddrClass = "a cloud metadata address"
	ClassListed        AddrClass = "a listed address"
	ClassHostAddr      AddrClass = "one of this host's addresses"
	ClassNonLoopback   AddrClass = "a non-loopback address"
	ClassUnparsable    AddrClass = "an unparsable address"
)

func (c AddrClass) String() string { return string(c) }

// classOrder is the reporting priority of every class.
var classOrder = []AddrClass{
	ClassDenyListed, ClassLoopback, ClassUnspecified, ClassLinkLocal, ClassMulticast,
	ClassBroadcast, ClassCloudMetadata, ClassListed, ClassHostAddr, ClassNonLoopback,
	ClassUnparsable,
}

// builtinDenied is the fixed set of ranges an allow-listed hostname may not
// resolve to, in class-priority order (the first matching row names the
// class). Private-use space (RFC 1918, RFC 4193, RFC 6598) is deliberately
// absent: allow-listing an intranet name is legitimate, so it is opt-in via
// deniedResolvedAddresses. IPv4 rows also bind the IPv6 forms that carry an
// IPv4 address (see embeddedIPv4).
var builtinDenied = []struct {
	prefix netip.Prefix
	class  AddrClass
}{
	{netip.MustParsePrefix("127.0.0.0/8"), ClassLoopback}, // RFC 1122 §3.2.1.3
	{netip.MustParsePrefix("::1/128"), ClassLoopback},     // RFC 4291 §2.5.3
	// RFC 1122 "this network"; common stacks deliver 0.0.0.0 to the local host.
	{netip.MustParsePrefix("0.0.0.0/8"), ClassUnspecified},
	{netip.MustParsePrefix("::/128"), ClassUnspecified}, // RFC 4291 §2.5.2
	// RFC 3927; also holds most instance-metadata endpoints (169.254.169.254).
	{netip.MustParsePrefix("169.254.0.0/16"), ClassLinkLocal},
	{netip.MustParsePrefix("fe80::/10"), ClassLinkLocal},          // RFC 4291 §2.5.6
	{netip.MustParsePrefix("224.0.0.0/4"), ClassMulticast},        // RFC 5771
	{netip.MustParsePrefix("ff00::/8"), ClassMulticast},           // RFC 4291 §2.7
	{netip.MustParsePrefix("255.255.255.255/32"), ClassBroadcast}, // RFC 919 limited broadcast
	// Metadata and platform endpoints outside link-local space.
	{netip.MustParsePrefix("100.100.100.200/32"), ClassCloudMetadata},     // Alibaba Cloud
	{netip.MustParsePrefix("168.63.129.16/32"), ClassCloudMetadata},       // Azure WireServer
	{netip.MustParsePrefix("192.0.0.192/32"), ClassCloudMetadata},         // Oracle Cloud Infrastructure Classic
	{netip.MustParsePrefix("fd00:ec2::/32"), ClassCloudMetadata},          // AWS IPv6 service block (IMDS fd00:ec2::254)
	{netip.MustParsePrefix("fd20:ce::254/128"), ClassCloudMetadata},       // Google Cloud, IPv6-only instances
	{netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"), ClassCloudMetadata}, // Oracle Cloud Infrastructure IPv6
	{netip.MustParsePrefix("fd00:42::42/128"), ClassCloudMetadata},        // Scaleway IPv6
	{netip.MustParsePrefix("fd00:a9fe:a9fe::1/128"), ClassCloudMetadata},  // Akamai / Linode IPv6
	{netip.MustParsePrefix("fd00:100::100:200/128"), ClassCloudMetadata},  // Alibaba Cloud IPv6
}

// builtinClass returns the class of the first built-in row containing a, or "".
func builtinClass(a netip.Addr) AddrClass {
	for _, row := range builtinDenied {
		if row.prefix.Contains(a) {
			return row.class
		}
	}
	return ""
}
