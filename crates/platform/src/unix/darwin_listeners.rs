//! macOS: who listens on a loopback port, from libproc: every process this
//! user may inspect (`proc_listallpids`), its descriptors
//! (`PROC_PIDLISTFDS`) and, for each socket, what it is bound to
//! (`PROC_PIDFDSOCKETINFO`). A process of another user cannot be inspected
//! (EPERM) and is not seen; see docs/SECURITY.md for why that is enough.
//!
//! `libc` has the calls and `proc_fdinfo` but not `socket_fdinfo` and what
//! it holds, so those are declared here from `<sys/proc_info.h>`, in fixed
//! width types, with their size checked against the header's. The decision
//! on one socket is plain code, compiled and unit-tested on every Unix.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `soi_kind` of a TCP socket.
const SOCKINFO_TCP: i32 = 2;
/// `tcpsi_state` of a listening TCP socket.
const TSI_S_LISTEN: i32 = 1;
/// `insi_vflag` bits: which of the address forms the socket uses.
const INI_IPV4: u8 = 0x1;
const INI_IPV6: u8 = 0x2;

/// `struct proc_fileinfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ProcFileinfo {
    fi_openflags: u32,
    fi_status: u32,
    fi_offset: i64,
    fi_type: i32,
    fi_guardflags: u32,
}

/// `struct vinfo_stat`: only its size matters here.
#[repr(C)]
#[derive(Clone, Copy)]
struct VinfoStat {
    head: [u32; 2],
    rest: [i64; 16],
}

/// `struct sockbuf_info`.
#[repr(C)]
#[derive(Clone, Copy)]
struct SockbufInfo {
    counts: [u32; 5],
    sbi_flags: i16,
    sbi_timeo: i16,
}

/// `struct in_sockinfo`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct InSockinfo {
    insi_fport: i32,
    /// The port in network byte order, in the low 16 bits.
    insi_lport: i32,
    insi_gencnt: u64,
    insi_flags: u32,
    insi_flow: u32,
    insi_vflag: u8,
    insi_ip_ttl: u8,
    rfu_1: u32,
    insi_faddr: [u8; 16],
    /// An IPv6 address, or an IPv4 one in its last four bytes
    /// (`struct in4in6_addr`).
    insi_laddr: [u8; 16],
    insi_v4: u8,
    insi_v6: [u32; 3],
}

/// `struct tcp_sockinfo`.
#[repr(C)]
#[derive(Clone, Copy)]
struct TcpSockinfo {
    tcpsi_ini: InSockinfo,
    tcpsi_state: i32,
    tcpsi_timer: [i32; 4],
    tcpsi_mss: i32,
    tcpsi_flags: u32,
    rfu_1: u32,
    tcpsi_tp: u64,
}

/// `soi_proto`: the union's largest member is the Unix socket's (two
/// `SOCK_MAXADDRLEN` addresses), hence the padding.
#[repr(C)]
#[derive(Clone, Copy)]
union SoiProto {
    pri_tcp: TcpSockinfo,
    largest: [u64; 66],
}

/// `struct socket_info`.
#[repr(C)]
#[derive(Clone, Copy)]
struct SocketInfo {
    soi_stat: VinfoStat,
    soi_so: u64,
    soi_pcb: u64,
    soi_type: i32,
    soi_protocol: i32,
    soi_family: i32,
    soi_shorts: [i16; 7],
    soi_error: u16,
    soi_oobmark: u32,
    soi_rcv: SockbufInfo,
    soi_snd: SockbufInfo,
    soi_kind: i32,
    rfu_1: u32,
    soi_proto: SoiProto,
}

/// `struct socket_fdinfo`, what `proc_pidfdinfo(PROC_PIDFDSOCKETINFO)`
/// fills.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct SocketFdinfo {
    pfi: ProcFileinfo,
    psi: SocketInfo,
}

// The header's sizes (the same on arm64 and x86_64): a wrong field above
// fails the build, on Linux too.
const _: () = assert!(std::mem::size_of::<InSockinfo>() == 80);
const _: () = assert!(std::mem::size_of::<TcpSockinfo>() == 120);
const _: () = assert!(std::mem::size_of::<SocketInfo>() == 768);
const _: () = assert!(std::mem::size_of::<SocketFdinfo>() == 792);

impl SocketFdinfo {
    /// All zeros: a valid value of every field (integers and arrays), and
    /// what the kernel overwrites.
    pub(crate) fn zeroed() -> Self {
        // SAFETY: every field, the union's included, is an integer or an
        // array of integers, for which all-zero bytes are a valid value.
        unsafe { std::mem::zeroed() }
    }
}

/// Whether `socket` listens where a connection to 127.0.0.1:`port` or
/// [::1]:`port` could arrive: a listening TCP socket on that port bound to
/// a loopback address, a wildcard, or their IPv4-mapped forms.
pub(crate) fn listens_on_loopback(socket: &SocketFdinfo, port: u16) -> bool {
    if socket.psi.soi_kind != SOCKINFO_TCP {
        return false;
    }
    // SAFETY: the kind says the kernel filled the TCP member; and any
    // bytes are a valid value of it (integers only).
    let tcp = unsafe { socket.psi.soi_proto.pri_tcp };
    let ini = &tcp.tcpsi_ini;
    if tcp.tcpsi_state != TSI_S_LISTEN || u16::from_be(ini.insi_lport as u16) != port {
        return false;
    }
    bound_address(ini).is_some_and(reaches_loopback)
}

/// The local address of an IP socket, in the form its flags say.
fn bound_address(ini: &InSockinfo) -> Option<IpAddr> {
    if ini.insi_vflag & INI_IPV6 != 0 {
        Some(IpAddr::V6(Ipv6Addr::from(ini.insi_laddr)))
    } else if ini.insi_vflag & INI_IPV4 != 0 {
        let [.., a, b, c, d] = ini.insi_laddr;
        Some(IpAddr::V4(Ipv4Addr::new(a, b, c, d)))
    } else {
        None
    }
}

/// Whether a socket bound to `addr` may receive a connection to 127.0.0.1
/// or ::1 (an IPv6 wildcard socket takes IPv4 too unless it is IPv6-only).
fn reaches_loopback(addr: IpAddr) -> bool {
    let v4 = |a: Ipv4Addr| a == Ipv4Addr::LOCALHOST || a.is_unspecified();
    match addr {
        IpAddr::V4(a) => v4(a),
        IpAddr::V6(a) => {
            a == Ipv6Addr::LOCALHOST || a.is_unspecified() || a.to_ipv4_mapped().is_some_and(v4)
        }
    }
}

#[cfg(target_os = "macos")]
pub(crate) use inspect::on_loopback;

#[cfg(target_os = "macos")]
mod inspect {
    use std::ffi::c_void;
    use std::io;
    use std::mem::size_of;

    use super::{listens_on_loopback, SocketFdinfo};
    use crate::Listener;

    /// `PROC_PIDFDSOCKETINFO`, which `libc` lacks.
    const PROC_PIDFDSOCKETINFO: libc::c_int = 3;
    /// Beyond any real system's process table or a process's descriptor
    /// table: a bound on what an answer may make elicit allocate.
    const MAX_ENTRIES: usize = 1 << 20;
    /// Room for processes started or descriptors opened between the call
    /// that counts them and the one that lists them.
    const SLACK: usize = 64;

    /// Who listens where a connection to 127.0.0.1:`port` or [::1]:`port`
    /// could arrive, told apart by whether the process holding the socket
    /// is in the process group `group`.
    pub(crate) fn on_loopback(port: u16, group: u32) -> io::Result<Listener> {
        let me = std::process::id();
        let mut found = Listener::Nobody;
        for pid in all_pids()? {
            if pid <= 0 || pid as u32 == me || !listens(pid, port) {
                continue;
            }
            // SAFETY: getpgid only reads the process table.
            let pgid = unsafe { libc::getpgid(pid) };
            if pgid < 0 || pgid as u32 != group {
                return Ok(Listener::Other(format!("pid {pid}")));
            }
            found = Listener::Tree;
        }
        Ok(found)
    }

    /// Every process id, sized from a first call that counts them.
    fn all_pids() -> io::Result<Vec<libc::pid_t>> {
        // SAFETY: a null buffer of size 0 asks only for the count.
        let count = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
        let capacity = bounded(count)?;
        let mut pids: Vec<libc::pid_t> = vec![0; capacity];
        let bytes = byte_len::<libc::pid_t>(capacity);
        // SAFETY: the buffer holds `bytes` bytes, which the call does not
        // write beyond; it answers how many pids it wrote.
        let written = unsafe { libc::proc_listallpids(pids.as_mut_ptr().cast::<c_void>(), bytes) };
        pids.truncate(bounded(written)?.min(capacity));
        Ok(pids)
    }

    /// Whether `pid` holds a socket listening where a loopback connection
    /// to `port` arrives (false for a process that cannot be inspected or
    /// is gone).
    fn listens(pid: libc::pid_t, port: u16) -> bool {
        descriptors(pid).iter().any(|fd| {
            fd.proc_fdtype == libc::PROX_FDTYPE_SOCKET as u32
                && socket_info(pid, fd.proc_fd).is_some_and(|s| listens_on_loopback(&s, port))
        })
    }

    /// The descriptors of `pid`, sized from a first call that measures them.
    fn descriptors(pid: libc::pid_t) -> Vec<libc::proc_fdinfo> {
        let list = |buf: *mut c_void, size: libc::c_int| {
            // SAFETY: `buf` is null with size 0 (a measure) or holds `size`
            // bytes, which the call does not write beyond.
            unsafe { libc::proc_pidinfo(pid, libc::PROC_PIDLISTFDS, 0, buf, size) }
        };
        let entry = size_of::<libc::proc_fdinfo>();
        let Ok(capacity) = bounded(list(std::ptr::null_mut(), 0) / entry as libc::c_int) else {
            return Vec::new();
        };
        let empty = libc::proc_fdinfo {
            proc_fd: 0,
            proc_fdtype: 0,
        };
        let mut fds = vec![empty; capacity];
        let written = list(
            fds.as_mut_ptr().cast(),
            byte_len::<libc::proc_fdinfo>(capacity),
        );
        fds.truncate((written.max(0) as usize / entry).min(capacity));
        fds
    }

    /// What the socket `fd` of `pid` is, if it still is one.
    fn socket_info(pid: libc::pid_t, fd: i32) -> Option<SocketFdinfo> {
        let mut info = SocketFdinfo::zeroed();
        let size = size_of::<SocketFdinfo>() as libc::c_int;
        // SAFETY: `info` is a `socket_fdinfo` of the header's size (checked
        // at build time), which is all the call writes.
        let written = unsafe {
            libc::proc_pidfdinfo(pid, fd, PROC_PIDFDSOCKETINFO, (&raw mut info).cast(), size)
        };
        (written == size).then_some(info)
    }

    /// A count from a first call, with slack, refused when negative (the
    /// call failed) or beyond any real table.
    fn bounded(count: libc::c_int) -> io::Result<usize> {
        let Ok(count) = usize::try_from(count) else {
            return Err(io::Error::last_os_error());
        };
        if count > MAX_ENTRIES {
            return Err(io::Error::other(format!(
                "the system reported {count} entries"
            )));
        }
        Ok(count + SLACK)
    }

    fn byte_len<T>(entries: usize) -> libc::c_int {
        libc::c_int::try_from(entries * size_of::<T>()).unwrap_or(libc::c_int::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn socket(kind: i32, state: i32, vflag: u8, laddr: [u8; 16], port: u16) -> SocketFdinfo {
        let mut s = SocketFdinfo::zeroed();
        s.psi.soi_kind = kind;
        // Writes to a union's fields need no `unsafe`: they only store.
        s.psi.soi_proto.pri_tcp.tcpsi_state = state;
        s.psi.soi_proto.pri_tcp.tcpsi_ini.insi_vflag = vflag;
        s.psi.soi_proto.pri_tcp.tcpsi_ini.insi_laddr = laddr;
        // As the kernel stores it: the network-order port widened to int.
        let lport = i32::from(u16::from_ne_bytes(port.to_be_bytes()));
        s.psi.soi_proto.pri_tcp.tcpsi_ini.insi_lport = lport;
        s
    }

    fn v4(a: [u8; 4]) -> [u8; 16] {
        let mut b = [0; 16];
        b[12..].copy_from_slice(&a);
        b
    }

    fn v6(a: Ipv6Addr) -> [u8; 16] {
        a.octets()
    }

    #[test]
    fn listening_tcp_sockets_on_loopback_or_wildcard_reach_the_port() {
        let tcp = SOCKINFO_TCP;
        let listen = TSI_S_LISTEN;
        for (addr, flag) in [
            (v4([127, 0, 0, 1]), INI_IPV4),
            (v4([0, 0, 0, 0]), INI_IPV4),
            (v6(Ipv6Addr::LOCALHOST), INI_IPV6),
            (v6(Ipv6Addr::UNSPECIFIED), INI_IPV6),
            (v6(Ipv4Addr::LOCALHOST.to_ipv6_mapped()), INI_IPV6),
            // A dual-stack socket says both forms; the IPv6 one holds.
            (v6(Ipv6Addr::UNSPECIFIED), INI_IPV4 | INI_IPV6),
        ] {
            assert!(listens_on_loopback(
                &socket(tcp, listen, flag, addr, 8080),
                8080
            ));
            assert!(!listens_on_loopback(
                &socket(tcp, listen, flag, addr, 8080),
                8081
            ));
        }
    }

    #[test]
    fn other_addresses_states_and_kinds_do_not_reach_the_port() {
        let (tcp, listen) = (SOCKINFO_TCP, TSI_S_LISTEN);
        let lo = v4([127, 0, 0, 1]);
        let off_loopback = [
            socket(tcp, listen, INI_IPV4, v4([10, 0, 0, 2]), 8080),
            socket(
                tcp,
                listen,
                INI_IPV6,
                v6("2001:db8::1".parse().unwrap()),
                8080,
            ),
            // No address form at all: nothing known, nothing trusted.
            socket(tcp, listen, 0, lo, 8080),
            // Established (4), not listening.
            socket(tcp, 4, INI_IPV4, lo, 8080),
            // Not TCP (an IP socket, kind 1).
            socket(1, listen, INI_IPV4, lo, 8080),
        ];
        for s in &off_loopback {
            assert!(!listens_on_loopback(s, 8080));
        }
    }

    #[test]
    fn the_port_is_read_in_network_byte_order() {
        // 8080 is 0x1F90; its bytes the other way round, 0x901F, are 36895.
        let s = socket(
            SOCKINFO_TCP,
            TSI_S_LISTEN,
            INI_IPV4,
            v4([127, 0, 0, 1]),
            8080,
        );
        assert!(listens_on_loopback(&s, 8080));
        assert!(!listens_on_loopback(&s, 36895));
    }
}
