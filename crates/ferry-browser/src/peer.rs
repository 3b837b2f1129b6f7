//! Who is on the other end of a loopback TCP connection: the owner check that keeps other
//! local processes off a session's proxy.
//!
//! A browser reaches its proxy on 127.0.0.1. Any other local process could connect to the
//! same port and use the session's allowlist and address policy as its own. Chromium cannot
//! answer proxy authentication without pausing every request through DevTools, so instead
//! the proxy asks the kernel: the peer's socket (looked up by its address pair over netlink
//! `sock_diag`, the interface `ss` uses) must be held by a process of the browser's process
//! group (its open file descriptors in `/proc`). Reading `/proc/net/tcp` instead was
//! measured at 5 ms per lookup with 300 sockets on the machine, growing with every socket.

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};

/// True when the TCP connection from `peer` to `local` (as seen by the accepting side) is
/// held, on the peer's side, by a live process of process group `pgid`. Linux only; false
/// when the kernel cannot tell. For repeated checks against one group, [`GroupOwner`]
/// remembers where the last socket was found.
pub fn connection_owned_by_group(peer: SocketAddr, local: SocketAddr, pgid: u32) -> bool {
    GroupOwner::new(pgid).owns(peer, local)
}

/// Repeated owner checks for one process group. The process that held the last matching
/// socket is looked at first (a browser's network service holds all its proxy
/// connections), after confirming it is still in the group; only a miss scans the group.
#[derive(Debug)]
pub struct GroupOwner {
    pgid: u32,
    last_holder: AtomicU32,
}

impl GroupOwner {
    /// Checks against process group `pgid`.
    pub fn new(pgid: u32) -> GroupOwner {
        GroupOwner {
            pgid,
            last_holder: AtomicU32::new(0),
        }
    }

    /// True when the peer's end of the `peer` → `local` connection is held by a live
    /// process of the group.
    pub fn owns(&self, peer: SocketAddr, local: SocketAddr) -> bool {
        let Some(inode) = socket_inode(peer, local) else {
            return false;
        };
        let target = format!("socket:[{inode}]");
        let last = self.last_holder.load(Ordering::Relaxed);
        if last != 0 && in_group(last, self.pgid) && holds(last, &target) {
            return true;
        }
        let found = crate::live_group_members(self.pgid)
            .into_iter()
            .find(|pid| *pid != last && holds(*pid, &target));
        if let Some(pid) = found {
            self.last_holder.store(pid, Ordering::Relaxed);
        }
        found.is_some()
    }
}

/// Whether live process `pid` belongs to process group `pgid`.
fn in_group(pid: u32, pgid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let Some(close) = stat.rfind(')') else {
        return false;
    };
    let mut fields = stat[close + 1..].split_whitespace();
    let state = fields.next();
    let group = fields.nth(1).and_then(|g| g.parse::<u32>().ok());
    group == Some(pgid) && state != Some("Z")
}

/// Whether process `pid` has `target` (`socket:[INODE]`) among its open files.
fn holds(pid: u32, target: &str) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|link| link.as_os_str() == target))
}

/// What a netlink lookup found.
enum Lookup {
    /// The socket's inode.
    Found(u32),
    /// The kernel answered: no such socket.
    NotFound,
    /// sock_diag cannot be used here (no netlink in this sandbox, not permitted, …).
    Unavailable,
}

/// Whether netlink sock_diag answered before (0 unknown, 1 works, 2 unavailable).
static NETLINK: AtomicU8 = AtomicU8::new(0);

/// The inode of the TCP socket `src` → `dst` (the peer's view): asked of the kernel over
/// netlink sock_diag (an exact lookup by the address pair, microseconds whatever the number
/// of sockets on the machine), or, where a sandbox offers no sock_diag, found in
/// `/proc/net/tcp{,6}`.
fn socket_inode(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    if NETLINK.load(Ordering::Relaxed) != 2 {
        match netlink_inode(src, dst) {
            Lookup::Found(inode) => {
                NETLINK.store(1, Ordering::Relaxed);
                return Some(inode);
            }
            Lookup::NotFound => {
                NETLINK.store(1, Ordering::Relaxed);
                return None;
            }
            Lookup::Unavailable => {
                if NETLINK.swap(2, Ordering::Relaxed) != 2 {
                    tracing::warn!(
                        "netlink sock_diag unavailable; proxy owner checks read /proc/net/tcp"
                    );
                }
            }
        }
    }
    proc_net_inode(src, dst)
}

/// The sock_diag lookup.
fn netlink_inode(src: SocketAddr, dst: SocketAddr) -> Lookup {
    use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketType, netlink};
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLM_F_REQUEST: u16 = 1;
    const NLMSG_ERROR: u16 = 2;
    const IPPROTO_TCP: u8 = 6;
    const NO_COOKIE: u32 = u32::MAX;
    const ENOENT: i32 = 2;
    let family: u8 = match (src, dst) {
        (SocketAddr::V4(_), SocketAddr::V4(_)) => 2,  // AF_INET
        (SocketAddr::V6(_), SocketAddr::V6(_)) => 10, // AF_INET6
        _ => return Lookup::NotFound,
    };
    // struct inet_diag_req_v2 (56 bytes) after struct nlmsghdr (16 bytes).
    let mut request = Vec::with_capacity(72);
    request.extend_from_slice(&72u32.to_ne_bytes());
    request.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    request.extend_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    request.extend_from_slice(&1u32.to_ne_bytes()); // sequence
    request.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel
    request.extend_from_slice(&[family, IPPROTO_TCP, 0, 0]);
    request.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    request.extend_from_slice(&src.port().to_be_bytes());
    request.extend_from_slice(&dst.port().to_be_bytes());
    for addr in [src.ip(), dst.ip()] {
        let mut words = [0u8; 16];
        match addr {
            IpAddr::V4(v4) => words[..4].copy_from_slice(&v4.octets()),
            IpAddr::V6(v6) => words.copy_from_slice(&v6.octets()),
        }
        request.extend_from_slice(&words);
    }
    request.extend_from_slice(&0u32.to_ne_bytes()); // interface
    request.extend_from_slice(&NO_COOKIE.to_ne_bytes());
    request.extend_from_slice(&NO_COOKIE.to_ne_bytes());

    let Ok(socket) = rustix::net::socket(
        AddressFamily::NETLINK,
        SocketType::DGRAM,
        Some(netlink::SOCK_DIAG),
    ) else {
        return Lookup::Unavailable;
    };
    let kernel = netlink::SocketAddrNetlink::new(0, 0);
    if rustix::net::sendto(&socket, &request, SendFlags::empty(), &kernel).is_err() {
        return Lookup::Unavailable;
    }
    let mut buffer = [0u8; 512];
    let Ok((length, _)) = rustix::net::recv(&socket, &mut buffer, RecvFlags::empty()) else {
        return Lookup::Unavailable;
    };
    let answer = &buffer[..length.min(buffer.len())];
    let word = |at: usize| answer.get(at..at + 4).map(|b| [b[0], b[1], b[2], b[3]]);
    let Some(kind) = answer.get(4..6).map(|b| u16::from_ne_bytes([b[0], b[1]])) else {
        return Lookup::Unavailable;
    };
    if kind == NLMSG_ERROR {
        // struct nlmsgerr: a negative errno after the header.
        return match word(16).map(i32::from_ne_bytes) {
            Some(e) if e == -ENOENT => Lookup::NotFound,
            _ => Lookup::Unavailable,
        };
    }
    if kind != SOCK_DIAG_BY_FAMILY {
        return Lookup::Unavailable;
    }
    // struct inet_diag_msg: 4 bytes, the 48-byte socket id, expires, rqueue, wqueue, uid,
    // then the inode.
    match word(16 + 4 + 48 + 16) {
        Some(inode) => Lookup::Found(u32::from_ne_bytes(inode)),
        None => Lookup::Unavailable,
    }
}

/// The `/proc/net/tcp{,6}` lookup (slow: the kernel lists every socket of the machine).
fn proc_net_inode(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    let (table, want_local, want_remote) = match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => (
            "/proc/net/tcp",
            hex_v4(s, src.port()),
            hex_v4(d, dst.port()),
        ),
        (IpAddr::V6(s), IpAddr::V6(d)) => (
            "/proc/net/tcp6",
            hex_v6(s, src.port()),
            hex_v6(d, dst.port()),
        ),
        _ => return None,
    };
    let text = std::fs::read_to_string(table).ok()?;
    text.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.len() > 9
            && fields[1].eq_ignore_ascii_case(&want_local)
            && fields[2].eq_ignore_ascii_case(&want_remote))
        .then(|| fields[9].parse().ok())
        .flatten()
    })
}

/// `/proc/net/tcp`'s spelling of an IPv4 socket address: the address as a native-endian
/// 32-bit hex number, the port big-endian.
fn hex_v4(ip: std::net::Ipv4Addr, port: u16) -> String {
    format!("{:08X}:{port:04X}", u32::from_ne_bytes(ip.octets()))
}

/// `/proc/net/tcp6`'s spelling: four native-endian 32-bit words.
fn hex_v6(ip: std::net::Ipv6Addr, port: u16) -> String {
    let words: String = ip
        .octets()
        .chunks_exact(4)
        .map(|w| format!("{:08X}", u32::from_ne_bytes([w[0], w[1], w[2], w[3]])))
        .collect();
    format!("{words}:{port:04X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection within this process: the accepting side's address, the peer's, and
    /// both ends (keep them alive while checking).
    async fn loopback_connection() -> (
        SocketAddr,
        SocketAddr,
        (tokio::net::TcpStream, tokio::net::TcpStream),
    ) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let local = listener.local_addr().expect("addr");
        let client = tokio::net::TcpStream::connect(local)
            .await
            .expect("connect");
        let (server, peer) = listener.accept().await.expect("accept");
        (local, peer, (client, server))
    }

    /// This process's group id.
    fn own_group() -> u32 {
        std::fs::read_to_string("/proc/self/stat")
            .ok()
            .and_then(|stat| {
                let after = stat.rsplit_once(')')?.1;
                after.split_whitespace().nth(2)?.parse::<u32>().ok()
            })
            .expect("own pgid")
    }

    #[test]
    fn addresses_are_spelled_like_proc_net_tcp() {
        assert_eq!(
            hex_v4("127.0.0.1".parse().expect("ip"), 8080),
            "0100007F:1F90"
        );
        assert_eq!(
            hex_v6("::1".parse().expect("ip"), 443),
            "00000000000000000000000001000000:01BB"
        );
    }

    #[tokio::test]
    async fn netlink_and_proc_agree_on_the_socket() {
        let (local, peer, _ends) = loopback_connection().await;
        let from_proc = proc_net_inode(peer, local).expect("in /proc/net/tcp");
        match netlink_inode(peer, local) {
            Lookup::Found(inode) => assert_eq!(inode, from_proc),
            Lookup::NotFound => panic!("sock_diag says no such socket"),
            // A sandbox without sock_diag: the /proc path is what runs there.
            Lookup::Unavailable => {}
        }
        let nowhere: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        assert!(matches!(
            netlink_inode(nowhere, local),
            Lookup::NotFound | Lookup::Unavailable
        ));
        assert!(proc_net_inode(nowhere, local).is_none());
    }

    #[tokio::test]
    async fn a_connection_of_this_process_is_owned_by_its_group_only() {
        let (local, peer, _ends) = loopback_connection().await;
        let own_group = own_group();
        assert!(connection_owned_by_group(peer, local, own_group));
        // Group 1 (init's) holds no such socket.
        assert!(!connection_owned_by_group(peer, local, 1));
        // A connection that does not exist has no owner.
        let nowhere: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        assert!(!connection_owned_by_group(nowhere, local, own_group));
    }

    /// The cost of the checks: `cargo test --release -p ferry-browser --lib owner_check_cost
    /// -- --ignored --nocapture`. Measured on the 2-core build machine: 7 µs for the netlink
    /// lookup, 60 µs for a repeated check, 0.7 ms for the first check of a group.
    #[tokio::test]
    #[ignore = "measurement, not a check; run in release"]
    async fn owner_check_cost() {
        let (local, peer, _ends) = loopback_connection().await;
        let group = own_group();
        let rounds = 200u32;
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            assert!(socket_inode(peer, local).is_some());
        }
        eprintln!("netlink lookup: {:?}", started.elapsed() / rounds);
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            assert!(connection_owned_by_group(peer, local, group));
        }
        eprintln!("first check of a group: {:?}", started.elapsed() / rounds);
        let owner = GroupOwner::new(group);
        let started = std::time::Instant::now();
        for _ in 0..rounds {
            assert!(owner.owns(peer, local));
        }
        eprintln!("repeated check: {:?}", started.elapsed() / rounds);
    }
}
