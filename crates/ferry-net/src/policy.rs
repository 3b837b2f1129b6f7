//! The IP policy: which addresses a client that follows user-supplied URLs may dial.
//!
//! [`classify`] names the special-purpose range an address falls in (`None` means globally
//! reachable unicast), following the IANA special-purpose registries as summarised in
//! `shared/notes/card-crypto.md` §5.2:
//!
//! - **IPv4**: `0/8`, `10/8`, `100.64/10` (CGNAT, where Alibaba's metadata service lives),
//!   `127/8`, `169.254/16` (every cloud's metadata service), `172.16/12`, `192.0.0/24`,
//!   `192.0.2/24`, `192.88.99/24`, `192.168/16`, `198.18/15`, `198.51.100/24`,
//!   `203.0.113/24`, `224/4`, `240/4` (with `255.255.255.255`).
//! - **IPv6**: only `2000::/3` (global unicast) may be public, and within it `2001::/23`,
//!   `2001:db8::/32`, `3fff::/20` and `2002::/16` (6to4) are not. Everything else — `::`,
//!   `::1`, `fc00::/7` (AWS IMDS `fd00:ec2::254`), `fe80::/10`, `fec0::/10`, `ff00::/8`,
//!   `100::/64` … — is special.
//! - **Embedded IPv4**: an IPv4-mapped address (`::ffff:127.0.0.1`) *is* its IPv4 address
//!   to a dual-stack socket, so it is classified as that address. IPv4-compatible addresses
//!   (`::a.b.c.d`, deprecated) and NAT64 addresses (`64:ff9b::/96`) report the range of the
//!   embedded address when it is special; a NAT64 address embedding a public address is
//!   [`Range::Nat64`], refused unless [`IpPolicy::allow_nat64`] says the host sits behind
//!   DNS64.
//!
//! [`IpPolicy`] turns a classification into a decision, with the `allow_private` switch for
//! intranets and tests and exact-address exceptions. Zone (scope) ids are always refused:
//! a scoped address names an interface, not a host.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A special-purpose address range: the reason an address is not publicly routable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Range {
    /// `0.0.0.0/8` or `::`: "this host/network"; `0.0.0.0` reaches local services on Linux.
    Unspecified,
    /// `127.0.0.0/8` or `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16` (RFC 1918).
    Private,
    /// `100.64.0.0/10`, shared address space (RFC 6598, carrier-grade NAT).
    SharedCgnat,
    /// `169.254/16` or `fe80::/10`: link-local, home of cloud metadata services.
    LinkLocal,
    /// `192.0.0.0/24` or `2001::/23`: IETF protocol assignments (Teredo included).
    IetfProtocol,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`: benchmarking (RFC 2544).
    Benchmarking,
    /// `192.88.99.0/24` or `2002::/16`: 6to4 relays and addresses.
    SixToFour,
    /// `224/4` or `ff00::/8`.
    Multicast,
    /// `240/4` (with `255.255.255.255`), and IPv6 space outside `2000::/3` that has no
    /// more specific name here.
    Reserved,
    /// `fc00::/7`: unique local addresses (RFC 4193).
    UniqueLocal,
    /// `fec0::/10`: deprecated site-local addresses.
    SiteLocal,
    /// `::a.b.c.d` (not `::` or `::1`): deprecated IPv4-compatible addresses.
    Ipv4Compatible,
    /// `64:ff9b::/96` embedding a public IPv4 address (RFC 6052), or `64:ff9b:1::/48`
    /// (local-use NAT64, RFC 8215).
    Nat64,
}

impl Range {
    /// Whether [`IpPolicy::allow_private`] lifts the refusal: unicast ranges that an
    /// intranet host may legitimately use. "This network", multicast and reserved space are
    /// never a host to fetch from, so they stay refused.
    pub fn is_local_use(self) -> bool {
        !matches!(
            self,
            Range::Unspecified | Range::Multicast | Range::Reserved
        )
    }

    /// A short lower-case name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Range::Unspecified => "unspecified",
            Range::Loopback => "loopback",
            Range::Private => "private-use",
            Range::SharedCgnat => "shared (CGNAT)",
            Range::LinkLocal => "link-local",
            Range::IetfProtocol => "IETF protocol assignment",
            Range::Documentation => "documentation",
            Range::Benchmarking => "benchmarking",
            Range::SixToFour => "6to4",
            Range::Multicast => "multicast",
            Range::Reserved => "reserved",
            Range::UniqueLocal => "unique-local",
            Range::SiteLocal => "site-local",
            Range::Ipv4Compatible => "IPv4-compatible",
            Range::Nat64 => "NAT64",
        }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why [`IpPolicy`] refused an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Refusal {
    /// The address is in a special-purpose range the policy does not allow.
    Range(Range),
    /// The address carries an IPv6 zone (scope) id.
    ZoneId,
    /// A cloud metadata service: refused even when private networks are allowed.
    Metadata,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Range(r) => write!(f, "{r} address"),
            Refusal::ZoneId => f.write_str("address with a zone id"),
            Refusal::Metadata => f.write_str("cloud metadata address"),
        }
    }
}

/// Cloud metadata services, refused whatever the policy allows (only an explicit
/// [`IpPolicy::allow_ip`] lets one through): AWS/GCP/Azure/OpenStack (`169.254.169.254`), AWS
/// over IPv6, Azure's wire server, Alibaba Cloud.
pub const METADATA: [IpAddr; 4] = [
    IpAddr::V4(std::net::Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V6(std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    IpAddr::V4(std::net::Ipv4Addr::new(168, 63, 129, 16)),
    IpAddr::V4(std::net::Ipv4Addr::new(100, 100, 100, 200)),
];

/// Whether `ip` (IPv4-mapped IPv6 included) is a cloud metadata address.
pub fn is_metadata(ip: IpAddr) -> bool {
    METADATA.contains(&ip.to_canonical())
}

/// Classifies an address: `None` when it is globally reachable unicast, otherwise the
/// special-purpose range that makes it unsafe to dial. IPv4-mapped IPv6 addresses are
/// classified as their IPv4 address.
///
/// ```
/// use ferry_net::policy::{classify, Range};
///
/// assert_eq!(classify("8.8.8.8".parse()?), None);
/// assert_eq!(classify("169.254.169.254".parse()?), Some(Range::LinkLocal));
/// assert_eq!(classify("::ffff:127.0.0.1".parse()?), Some(Range::Loopback));
/// assert_eq!(classify("fd00:ec2::254".parse()?), Some(Range::UniqueLocal));
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
pub fn classify(ip: IpAddr) -> Option<Range> {
    match ip.to_canonical() {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn classify_v4(ip: Ipv4Addr) -> Option<Range> {
    const TABLE: [([u8; 4], u32, Range); 15] = [
        ([0, 0, 0, 0], 8, Range::Unspecified),
        ([10, 0, 0, 0], 8, Range::Private),
        ([100, 64, 0, 0], 10, Range::SharedCgnat),
        ([127, 0, 0, 0], 8, Range::Loopback),
        ([169, 254, 0, 0], 16, Range::LinkLocal),
        ([172, 16, 0, 0], 12, Range::Private),
        ([192, 0, 0, 0], 24, Range::IetfProtocol),
        ([192, 0, 2, 0], 24, Range::Documentation),
        ([192, 88, 99, 0], 24, Range::SixToFour),
        ([192, 168, 0, 0], 16, Range::Private),
        ([198, 18, 0, 0], 15, Range::Benchmarking),
        ([198, 51, 100, 0], 24, Range::Documentation),
        ([203, 0, 113, 0], 24, Range::Documentation),
        ([224, 0, 0, 0], 4, Range::Multicast),
        ([240, 0, 0, 0], 4, Range::Reserved),
    ];
    TABLE
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, range)| *range)
}

fn in_v6(ip: Ipv6Addr, net: u128, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == net & mask
}

fn classify_v6(ip: Ipv6Addr) -> Option<Range> {
    let bits = u128::from(ip);
    let low_v4 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if bits == 0 {
        return Some(Range::Unspecified);
    }
    if bits == 1 {
        return Some(Range::Loopback);
    }
    // ::/96, IPv4-compatible (deprecated): never dialed, but say what it embeds.
    if in_v6(ip, 0, 96) {
        return Some(classify_v4(low_v4).unwrap_or(Range::Ipv4Compatible));
    }
    // 64:ff9b::/96, NAT64 well-known prefix: through a NAT64 gateway it reaches its
    // embedded IPv4 address, so a special embedded address keeps its range.
    if in_v6(ip, 0x0064_ff9b << 96, 96) {
        return Some(classify_v4(low_v4).unwrap_or(Range::Nat64));
    }
    if in_v6(ip, 0x0064_ff9b_0001 << 80, 48) {
        return Some(Range::Nat64);
    }
    if in_v6(ip, 0xfc00 << 112, 7) {
        return Some(Range::UniqueLocal);
    }
    if in_v6(ip, 0xfe80 << 112, 10) {
        return Some(Range::LinkLocal);
    }
    if in_v6(ip, 0xfec0 << 112, 10) {
        return Some(Range::SiteLocal);
    }
    if in_v6(ip, 0xff00 << 112, 8) {
        return Some(Range::Multicast);
    }
    if !in_v6(ip, 0x2000 << 112, 3) {
        return Some(Range::Reserved);
    }
    // Inside 2000::/3, the ranges that are not global.
    if in_v6(ip, 0x2001_0db8 << 96, 32) || in_v6(ip, 0x3fff << 112, 20) {
        return Some(Range::Documentation);
    }
    if in_v6(ip, 0x2001 << 112, 23) {
        return Some(Range::IetfProtocol);
    }
    if in_v6(ip, 0x2002 << 112, 16) {
        return Some(Range::SixToFour);
    }
    None
}

/// Which addresses a client may dial.
///
/// The default, [`IpPolicy::public_only`], allows only globally reachable unicast
/// addresses. Three opt-outs exist, each for a reason:
///
/// 1. [`IpPolicy::allow_private`] — intranet deployments and tests on `127.0.0.1` — allows
///    every range whose [`Range::is_local_use`] is true (loopback, RFC 1918, link-local,
///    ULA, …). Unspecified, multicast and reserved addresses stay refused.
/// 2. [`IpPolicy::allow_ip`] allows one exact address (after IPv4-mapped addresses are
///    canonicalized), for a known internal host.
/// 3. [`IpPolicy::allow_nat64`] accepts `64:ff9b::/96` addresses whose embedded IPv4 address is
///    public, for IPv6-only hosts behind DNS64.
///
/// Zone ids are refused under every setting.
///
/// ```
/// use ferry_net::policy::{IpPolicy, Range, Refusal};
///
/// let public = IpPolicy::public_only();
/// assert_eq!(public.check("10.1.2.3".parse()?), Err(Refusal::Range(Range::Private)));
/// assert!(public.clone().allow_private(true).check("10.1.2.3".parse()?).is_ok());
/// # Ok::<(), std::net::AddrParseError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IpPolicy {
    allow_private: bool,
    allow_loopback: bool,
    allow_nat64: bool,
    allowed: Vec<IpAddr>,
}

impl IpPolicy {
    /// Only globally reachable unicast addresses (the default).
    pub fn public_only() -> IpPolicy {
        IpPolicy::default()
    }

    /// Also allow loopback, private, link-local, CGNAT, ULA and the other local-use ranges
    /// ([`Range::is_local_use`]). For intranets and tests only: with this on, a hostile URL
    /// can reach anything on the local network — except the cloud metadata services
    /// ([`METADATA`]), which stay refused.
    pub fn allow_private(mut self, allow: bool) -> IpPolicy {
        self.allow_private = allow;
        self
    }

    /// Also allow loopback addresses (`127/8`, `::1`), and nothing else of the local ranges:
    /// for a URL the user typed that names their own machine (`http://127.0.0.1:8765`), which
    /// is not a request forgery. Implied by [`IpPolicy::allow_private`].
    pub fn allow_loopback(mut self, allow: bool) -> IpPolicy {
        self.allow_loopback = allow;
        self
    }

    /// Whether [`IpPolicy::allow_private`] is on.
    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// Accept NAT64 (`64:ff9b::/96`) addresses that embed a public IPv4 address. Off by
    /// default: on a host without NAT64 such an address is never a real destination.
    pub fn allow_nat64(mut self, allow: bool) -> IpPolicy {
        self.allow_nat64 = allow;
        self
    }

    /// Allow one exact address whatever its range (IPv4-mapped addresses are compared as
    /// their IPv4 address). Zone ids are still refused.
    pub fn allow_ip(mut self, ip: IpAddr) -> IpPolicy {
        self.allowed.push(ip.to_canonical());
        self
    }

    /// Decides whether `ip` may be dialed.
    pub fn check(&self, ip: IpAddr) -> Result<(), Refusal> {
        if self.allowed.contains(&ip.to_canonical()) {
            return Ok(());
        }
        if is_metadata(ip) {
            return Err(Refusal::Metadata);
        }
        match classify(ip) {
            None => Ok(()),
            Some(Range::Nat64) if self.allow_nat64 && in_v6_nat64_wkp(ip) => Ok(()),
            Some(range) if self.allow_private && range.is_local_use() => Ok(()),
            Some(Range::Loopback) if self.allow_loopback => Ok(()),
            Some(range) => Err(Refusal::Range(range)),
        }
    }

    /// As [`IpPolicy::check`], and refuses a socket address with an IPv6 zone (scope) id.
    pub fn check_socket(&self, addr: SocketAddr) -> Result<(), Refusal> {
        if let SocketAddr::V6(v6) = addr
            && v6.scope_id() != 0
        {
            return Err(Refusal::ZoneId);
        }
        self.check(addr.ip())
    }
}

fn in_v6_nat64_wkp(ip: IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if in_v6(v6, 0x0064_ff9b << 96, 96))
}

#[cfg(test)]
mod tests;
