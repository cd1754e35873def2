//! IP values: an address as tantivy holds it, and CIDR blocks as ranges of them.

use serde_json::Value;

/// An IP address as tantivy holds it: IPv6, an IPv4 one mapped.
pub fn read_ip(v: &Value) -> Result<std::net::Ipv6Addr, String> {
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected an IP address, got {v}"))?;
    let ip: std::net::IpAddr = s
        .parse()
        .map_err(|_| format!("`{s}` is not an IP address"))?;
    Ok(match ip {
        std::net::IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        std::net::IpAddr::V6(v6) => v6,
    })
}

/// The first and last address of a CIDR block (`10.0.0.0/8`, `2001:db8::/32`).
pub fn ip_block(cidr: &str) -> Result<(std::net::Ipv6Addr, std::net::Ipv6Addr), String> {
    let (addr, bits) = cidr
        .split_once('/')
        .ok_or_else(|| format!("`{cidr}` is not a CIDR block"))?;
    let ip: std::net::IpAddr = addr
        .parse()
        .map_err(|_| format!("`{cidr}`: `{addr}` is not an IP address"))?;
    let bits: u32 = bits
        .parse()
        .map_err(|_| format!("`{cidr}`: `{bits}` is not a prefix length"))?;
    let (base, bits) = match ip {
        std::net::IpAddr::V4(v4) if bits <= 32 => (u128::from(v4.to_ipv6_mapped()), bits + 96),
        std::net::IpAddr::V6(v6) if bits <= 128 => (u128::from(v6), bits),
        _ => return Err(format!("`{cidr}`: the prefix length is too long")),
    };
    let host = if bits == 0 {
        u128::MAX
    } else {
        u128::MAX.checked_shr(bits).unwrap_or(0)
    };
    Ok(((base & !host).into(), (base | host).into()))
}
