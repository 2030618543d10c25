//! Linux: who listens on a loopback port, from `/proc/net/tcp{,6}` (each
//! listening socket's address, owner uid and inode) and `/proc/PID/fd` of
//! a tree's processes (the sockets they hold, as `socket:[INODE]`).

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::Listener;

/// The kernel's state number for a listening TCP socket.
const LISTEN: &str = "0A";

/// One listening socket of the tables.
#[derive(Debug, PartialEq, Eq)]
struct Socket {
    uid: u32,
    inode: u64,
}

/// Who listens where a connection to 127.0.0.1:`port` or [::1]:`port`
/// could arrive, told apart by whether `members` (process ids) hold the
/// socket.
pub(crate) fn on_loopback(port: u16, members: &[u32]) -> io::Result<Listener> {
    // The tables first, the processes' sockets after: a socket of the
    // tree seen in the tables is then among its descriptors too.
    let mut listening = read_table("/proc/net/tcp", port)?;
    match read_table("/proc/net/tcp6", port) {
        Ok(more) => listening.extend(more),
        // A kernel without IPv6 has no second table.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if listening.is_empty() {
        return Ok(Listener::Nobody);
    }
    let held = sockets_held(members);
    Ok(match listening.iter().find(|s| !held.contains(&s.inode)) {
        Some(other) => Listener::Other(format!("uid {}", other.uid)),
        None => Listener::Tree,
    })
}

fn read_table(path: &str, port: u16) -> io::Result<Vec<Socket>> {
    let text = std::fs::read_to_string(path)?;
    Ok(listening_on(&text, port))
}

/// The listening sockets of one table (`/proc/net/tcp` or `tcp6`) that a
/// connection to the loopback address on `port` could reach.
fn listening_on(table: &str, port: u16) -> Vec<Socket> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // sl local rem st queues timer retransmits uid timeout inode
            let f: Vec<&str> = line.split_whitespace().collect();
            let (addr, at) = f.get(1)?.split_once(':')?;
            if *f.get(3)? != LISTEN || u16::from_str_radix(at, 16).ok()? != port {
                return None;
            }
            reaches_loopback(parse_addr(addr)?).then_some(())?;
            Some(Socket {
                uid: f.get(7)?.parse().ok()?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// An address as the tables print it: the bytes in network order, read
/// as 32-bit words printed in the machine's own order.
fn parse_addr(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| {
        u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16)
            .ok()
            .map(u32::to_ne_bytes)
    };
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(bytes)))
        }
        _ => None,
    }
}

/// Whether a socket bound to `addr` may receive a connection to 127.0.0.1
/// or ::1: the loopback addresses themselves, the wildcards, and the
/// IPv4-mapped forms of both (an IPv6 wildcard socket takes IPv4 too
/// unless it is IPv6-only, which the tables do not say).
fn reaches_loopback(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a == Ipv4Addr::LOCALHOST || a.is_unspecified(),
        IpAddr::V6(a) => {
            a == Ipv6Addr::LOCALHOST
                || a.is_unspecified()
                || a.to_ipv4_mapped()
                    .is_some_and(|v4| v4 == Ipv4Addr::LOCALHOST || v4.is_unspecified())
        }
    }
}

/// The inodes of the sockets `pids` hold open (what their descriptors
/// can be read of: a process of another user, or gone, holds none here).
fn sockets_held(pids: &[u32]) -> HashSet<u64> {
    let mut held = HashSet::new();
    for pid in pids {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u64>().ok());
            held.extend(inode);
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 65534        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0000000000000000 100 0 0 10 0
   3: 0200000A:1F92 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 444 1 0000000000000000 100 0 0 10 0
";

    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 555 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1F91 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 666 1 0000000000000000 100 0 0 10 0
   2: B80D0120000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 100 0 0 10 0
";

    #[cfg(target_endian = "little")]
    #[test]
    fn listening_sockets_on_loopback_or_wildcard_are_found_by_port() {
        // 8080: 127.0.0.1 listening (the connected one, state 01, is not).
        assert_eq!(
            listening_on(TCP, 8080),
            vec![Socket {
                uid: 65534,
                inode: 111
            }]
        );
        // 8081: the wildcard.
        assert_eq!(
            listening_on(TCP, 8081),
            vec![Socket {
                uid: 1000,
                inode: 222
            }]
        );
        // 8082: only on 10.0.0.2, which a loopback connection never reaches.
        assert!(listening_on(TCP, 8082).is_empty());
        // IPv6: ::1 on 8080 (not 2001:db8::1), ::ffff:127.0.0.1 on 8081.
        assert_eq!(
            listening_on(TCP6, 8080),
            vec![Socket {
                uid: 1000,
                inode: 555
            }]
        );
        assert_eq!(
            listening_on(TCP6, 8081),
            vec![Socket {
                uid: 1000,
                inode: 666
            }]
        );
        assert!(listening_on(TCP, 9).is_empty());
    }

    #[test]
    fn a_listener_of_this_process_is_the_trees_and_of_no_tree_is_another() {
        let socket = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = socket.local_addr().unwrap().port();
        let me = std::process::id();
        assert_eq!(on_loopback(port, &[me]).unwrap(), Listener::Tree);
        let uid = rustix::process::getuid().as_raw();
        assert_eq!(
            on_loopback(port, &[]).unwrap(),
            Listener::Other(format!("uid {uid}"))
        );
        drop(socket);
        assert_eq!(on_loopback(port, &[me]).unwrap(), Listener::Nobody);
    }
}
