//! std.Io.net addresses as the socket calls of libc take and give them (the dialer's connects,
//! the resolver's datagrams).
const std = @import("std");
const c = std.c;
const net = std.Io.net;

pub const Sockaddr = extern union {
    any: c.sockaddr,
    in: c.sockaddr.in,
    in6: c.sockaddr.in6,

    pub fn of(ip: *const net.IpAddress) struct { Sockaddr, c.socklen_t } {
        return switch (ip.*) {
            .ip4 => |a| .{ .{ .in = .{ .port = std.mem.nativeToBig(u16, a.port), .addr = @bitCast(a.bytes) } }, @sizeOf(c.sockaddr.in) },
            .ip6 => |a| .{ .{ .in6 = .{ .port = std.mem.nativeToBig(u16, a.port), .flowinfo = a.flow, .addr = a.bytes, .scope_id = a.interface.index } }, @sizeOf(c.sockaddr.in6) },
        };
    }

    pub fn toIp(s: *const Sockaddr) net.IpAddress {
        if (s.any.family == c.AF.INET6) return .{ .ip6 = .{
            .port = std.mem.bigToNative(u16, s.in6.port),
            .bytes = s.in6.addr,
            .flow = s.in6.flowinfo,
            .interface = .{ .index = s.in6.scope_id },
        } };
        return .{ .ip4 = .{ .port = std.mem.bigToNative(u16, s.in.port), .bytes = @bitCast(s.in.addr) } };
    }

    /// The first `len` bytes, for comparing addresses.
    pub fn bytes(s: *const Sockaddr, len: c.socklen_t) []const u8 {
        return std.mem.asBytes(s)[0..@min(len, @sizeOf(Sockaddr))];
    }
};
