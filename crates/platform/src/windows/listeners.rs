//! Windows: who listens on a loopback port, from the TCP tables with each
//! listening socket's owning process (`GetExtendedTcpTable`), told apart by
//! whether that process is in a job's process list.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};

use windows_sys::Win32::Foundation::{ERROR_INSUFFICIENT_BUFFER, NO_ERROR};
use windows_sys::Win32::NetworkManagement::IpHelper::{
    GetExtendedTcpTable, MIB_TCP6ROW_OWNER_PID, MIB_TCPROW_OWNER_PID, TCP_TABLE_OWNER_PID_LISTENER,
};
use windows_sys::Win32::Networking::WinSock::{AF_INET, AF_INET6};

use crate::Listener;

/// Who listens where a connection to 127.0.0.1:`port` or [::1]:`port`
/// could arrive, told apart by whether `members` (process ids) own it.
pub(crate) fn on_loopback(port: u16, members: &[u32]) -> io::Result<Listener> {
    let mut owners = Vec::new();
    for row in rows::<MIB_TCPROW_OWNER_PID>(AF_INET as u32)? {
        let addr = Ipv4Addr::from(row.dwLocalAddr.to_ne_bytes());
        if row_port(row.dwLocalPort) == port && (addr.is_loopback() || addr.is_unspecified()) {
            owners.push(row.dwOwningPid);
        }
    }
    for row in rows::<MIB_TCP6ROW_OWNER_PID>(AF_INET6 as u32)? {
        let addr = Ipv6Addr::from(row.ucLocalAddr);
        let mapped = addr.to_ipv4_mapped();
        let reaches = addr == Ipv6Addr::LOCALHOST
            || addr.is_unspecified()
            || mapped.is_some_and(|a| a.is_loopback() || a.is_unspecified());
        if row_port(row.dwLocalPort) == port && reaches {
            owners.push(row.dwOwningPid);
        }
    }
    Ok(match owners.iter().find(|pid| !members.contains(pid)) {
        Some(pid) => Listener::Other(format!("pid {pid}")),
        None if owners.is_empty() => Listener::Nobody,
        None => Listener::Tree,
    })
}

/// A port as the tables hold it: network order in the low 16 bits.
fn row_port(raw: u32) -> u16 {
    u16::from_be_bytes([raw as u8, (raw >> 8) as u8])
}

/// The listening rows of one address family's table, with their owners.
fn rows<Row: Copy>(family: u32) -> io::Result<Vec<Row>> {
    let mut size = 0u32;
    let mut buf: Vec<u32> = Vec::new();
    // The table can grow between the call that sizes it and the one that
    // fills it: a few tries.
    for _ in 0..4 {
        // SAFETY: FFI; the pointer and size describe `buf` (u32s, so the
        // table's leading count and rows of u32 fields are aligned), which
        // lives for the call; the API writes at most `size` bytes.
        let status = unsafe {
            GetExtendedTcpTable(
                buf.as_mut_ptr().cast(),
                &mut size,
                0,
                family,
                TCP_TABLE_OWNER_PID_LISTENER,
                0,
            )
        };
        match status {
            NO_ERROR if !buf.is_empty() => return Ok(read_rows(&buf)),
            NO_ERROR | ERROR_INSUFFICIENT_BUFFER => {
                buf = vec![0u32; (size as usize).div_ceil(4) + 16];
                size = (buf.len() * 4) as u32;
            }
            e => return Err(io::Error::from_raw_os_error(e as i32)),
        }
    }
    Err(io::Error::other("the TCP table kept growing"))
}

/// The rows after the table's leading count.
fn read_rows<Row: Copy>(buf: &[u32]) -> Vec<Row> {
    let count = buf[0] as usize;
    let room = (buf.len() - 1) * 4 / std::mem::size_of::<Row>();
    let rows = buf[1..].as_ptr().cast::<Row>();
    (0..count.min(room))
        // SAFETY: `i` is below both the count the API wrote and the rows
        // `buf` has room for; the rows are plain integers, aligned to 4 as
        // `buf` is, and `read_unaligned` asks for no more.
        .map(|i| unsafe { rows.add(i).read_unaligned() })
        .collect()
}
