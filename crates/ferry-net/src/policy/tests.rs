//! The classifier table: one address per range, with the first and last address of each
//! range and the public neighbours just outside it.

use super::*;
use std::net::SocketAddrV6;

/// `(address, expected range)`; `None` means public.
const TABLE: &[(&str, Option<Range>)] = &[
    // IPv4
    ("0.0.0.0", Some(Range::Unspecified)),
    ("0.255.255.255", Some(Range::Unspecified)),
    ("1.0.0.0", None),
    ("9.255.255.255", None),
    ("10.0.0.0", Some(Range::Private)),
    ("10.255.255.255", Some(Range::Private)),
    ("11.0.0.0", None),
    ("100.63.255.255", None),
    ("100.64.0.0", Some(Range::SharedCgnat)),
    ("100.100.100.200", Some(Range::SharedCgnat)),
    ("100.127.255.255", Some(Range::SharedCgnat)),
    ("100.128.0.0", None),
    ("126.255.255.255", None),
    ("127.0.0.0", Some(Range::Loopback)),
    ("127.0.0.1", Some(Range::Loopback)),
    ("127.255.255.255", Some(Range::Loopback)),
    ("128.0.0.0", None),
    ("169.253.255.255", None),
    ("169.254.0.0", Some(Range::LinkLocal)),
    ("169.254.169.254", Some(Range::LinkLocal)),
    ("169.254.255.255", Some(Range::LinkLocal)),
    ("169.255.0.0", None),
    ("172.15.255.255", None),
    ("172.16.0.0", Some(Range::Private)),
    ("172.31.255.255", Some(Range::Private)),
    ("172.32.0.0", None),
    ("192.0.0.0", Some(Range::IetfProtocol)),
    ("192.0.0.192", Some(Range::IetfProtocol)),
    ("192.0.0.255", Some(Range::IetfProtocol)),
    ("192.0.1.0", None),
    ("192.0.2.0", Some(Range::Documentation)),
    ("192.0.2.255", Some(Range::Documentation)),
    ("192.31.196.1", None),
    ("192.52.193.1", None),
    ("192.88.99.0", Some(Range::SixToFour)),
    ("192.88.99.255", Some(Range::SixToFour)),
    ("192.167.255.255", None),
    ("192.168.0.0", Some(Range::Private)),
    ("192.168.255.255", Some(Range::Private)),
    ("192.169.0.0", None),
    ("192.175.48.1", None),
    ("198.17.255.255", None),
    ("198.18.0.0", Some(Range::Benchmarking)),
    ("198.19.255.255", Some(Range::Benchmarking)),
    ("198.20.0.0", None),
    ("198.51.100.0", Some(Range::Documentation)),
    ("198.51.100.255", Some(Range::Documentation)),
    ("203.0.113.0", Some(Range::Documentation)),
    ("203.0.113.255", Some(Range::Documentation)),
    ("223.255.255.255", None),
    ("224.0.0.0", Some(Range::Multicast)),
    ("233.252.0.1", Some(Range::Multicast)),
    ("239.255.255.255", Some(Range::Multicast)),
    ("240.0.0.0", Some(Range::Reserved)),
    ("255.255.255.255", Some(Range::Reserved)),
    ("8.8.8.8", None),
    ("168.63.129.16", None),
    // IPv6
    ("::", Some(Range::Unspecified)),
    ("::1", Some(Range::Loopback)),
    ("::2", Some(Range::Unspecified)),
    ("::8.8.8.8", Some(Range::Ipv4Compatible)),
    ("::127.0.0.1", Some(Range::Loopback)),
    ("::ffff:127.0.0.1", Some(Range::Loopback)),
    ("::ffff:7f00:1", Some(Range::Loopback)),
    ("::ffff:10.0.0.1", Some(Range::Private)),
    ("::ffff:169.254.169.254", Some(Range::LinkLocal)),
    ("::ffff:0.0.0.0", Some(Range::Unspecified)),
    ("::ffff:8.8.8.8", None),
    ("64:ff9b::127.0.0.1", Some(Range::Loopback)),
    ("64:ff9b::169.254.169.254", Some(Range::LinkLocal)),
    ("64:ff9b::8.8.8.8", Some(Range::Nat64)),
    ("64:ff9b:1::1", Some(Range::Nat64)),
    ("100::", Some(Range::Reserved)),
    ("100::ffff:ffff:ffff:ffff", Some(Range::Reserved)),
    ("5f00::1", Some(Range::Reserved)),
    (
        "1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::Reserved),
    ),
    ("fc00::", Some(Range::UniqueLocal)),
    ("fd00:ec2::254", Some(Range::UniqueLocal)),
    (
        "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::UniqueLocal),
    ),
    ("fe80::", Some(Range::LinkLocal)),
    (
        "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::LinkLocal),
    ),
    ("fec0::1", Some(Range::SiteLocal)),
    (
        "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::SiteLocal),
    ),
    ("ff02::1", Some(Range::Multicast)),
    (
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::Multicast),
    ),
    ("2000::", None),
    ("2001::", Some(Range::IetfProtocol)),
    ("2001:2::1", Some(Range::IetfProtocol)),
    (
        "2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::IetfProtocol),
    ),
    ("2001:200::", None),
    ("2001:db8::", Some(Range::Documentation)),
    (
        "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::Documentation),
    ),
    ("2001:db9::", None),
    ("2002::", Some(Range::SixToFour)),
    (
        "2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::SixToFour),
    ),
    ("2003::", None),
    ("2606:4700:4700::1111", None),
    ("3ffe:ffff::1", None),
    ("3fff::", Some(Range::Documentation)),
    (
        "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff",
        Some(Range::Documentation),
    ),
    ("3fff:1000::", None),
    ("3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", None),
    ("4000::", Some(Range::Reserved)),
];

#[test]
fn classifier_table() {
    for (text, expected) in TABLE {
        let ip: IpAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(classify(ip), *expected, "{text}");
        let verdict = IpPolicy::public_only().check(ip);
        // Metadata services are refused even where their range is public (Azure's wire server).
        assert_eq!(
            verdict.is_ok(),
            expected.is_none() && !is_metadata(ip),
            "{text}"
        );
    }
}

#[test]
fn classifier_agrees_with_std_where_std_is_stable() {
    for (text, expected) in TABLE {
        let Ok(IpAddr::V4(v4)) = text.parse::<IpAddr>() else {
            continue;
        };
        let std_special = v4.is_private()
            || v4.is_loopback()
            || v4.is_link_local()
            || v4.is_documentation()
            || v4.is_broadcast()
            || v4.is_multicast()
            || v4.is_unspecified();
        if std_special {
            assert!(expected.is_some(), "{text} is special to std");
        }
    }
}

#[test]
fn allow_private_lifts_local_use_ranges_only() {
    let policy = IpPolicy::public_only().allow_private(true);
    for ok in [
        "127.0.0.1",
        "::1",
        "10.0.0.1",
        "169.254.1.1",
        "fd00::1",
        "::ffff:127.0.0.1",
    ] {
        assert_eq!(policy.check(ok.parse().expect(ok)), Ok(()), "{ok}");
    }
    for (refused, range) in [
        ("0.0.0.0", Range::Unspecified),
        ("::", Range::Unspecified),
        ("224.0.0.1", Range::Multicast),
        ("255.255.255.255", Range::Reserved),
        ("ff02::1", Range::Multicast),
    ] {
        assert_eq!(
            policy.check(refused.parse().expect(refused)),
            Err(Refusal::Range(range)),
            "{refused}"
        );
    }
}

#[test]
fn nat64_needs_its_switch_and_a_public_embedded_address() {
    let nat64 = IpPolicy::public_only().allow_nat64(true);
    assert_eq!(nat64.check("64:ff9b::8.8.8.8".parse().expect("ip")), Ok(()));
    assert_eq!(
        nat64.check("64:ff9b::127.0.0.1".parse().expect("ip")),
        Err(Refusal::Range(Range::Loopback))
    );
    assert_eq!(
        nat64.check("64:ff9b:1::8.8.8.8".parse().expect("ip")),
        Err(Refusal::Range(Range::Nat64))
    );
}

#[test]
fn exact_exceptions_and_zone_ids() {
    let policy = IpPolicy::public_only().allow_ip("127.0.0.1".parse().expect("ip"));
    assert_eq!(policy.check("127.0.0.1".parse().expect("ip")), Ok(()));
    assert_eq!(
        policy.check("::ffff:127.0.0.1".parse().expect("ip")),
        Ok(())
    );
    assert_eq!(
        policy.check("127.0.0.2".parse().expect("ip")),
        Err(Refusal::Range(Range::Loopback))
    );
    let scoped = SocketAddr::V6(SocketAddrV6::new("fe80::1".parse().expect("ip"), 443, 0, 2));
    let open = IpPolicy::public_only().allow_private(true);
    assert_eq!(open.check_socket(scoped), Err(Refusal::ZoneId));
    let global = SocketAddr::V6(SocketAddrV6::new(
        "2606:4700:4700::1111".parse().expect("ip"),
        443,
        0,
        3,
    ));
    assert_eq!(
        IpPolicy::public_only().check_socket(global),
        Err(Refusal::ZoneId)
    );
}

#[test]
fn metadata_stays_refused_when_private_networks_are_allowed() {
    let open = IpPolicy::public_only().allow_private(true);
    for ip in [
        "169.254.169.254",
        "::ffff:169.254.169.254",
        "fd00:ec2::254",
        "168.63.129.16",
        "100.100.100.200",
    ] {
        let ip: IpAddr = ip.parse().expect("ip");
        assert_eq!(open.check(ip), Err(Refusal::Metadata), "{ip}");
        assert_eq!(
            IpPolicy::public_only().check(ip),
            Err(Refusal::Metadata),
            "{ip}"
        );
    }
    assert!(
        open.check("169.254.1.1".parse().expect("ip")).is_ok(),
        "other link-local is local use"
    );
    let pinned = IpPolicy::public_only().allow_ip("169.254.169.254".parse().expect("ip"));
    assert!(
        pinned.check("169.254.169.254".parse().expect("ip")).is_ok(),
        "an explicit allow_ip wins"
    );
}
