//! Opening TCP connections, for std.http and for the proxy tunnel alike: each connect is
//! bounded by timeouts.connect_ms, and its socket is known to the watchdog from the start, so
//! a cancel or the turn's deadline also ends a connect that hangs (a host that drops SYNs, a
//! listener whose queue is full).
//!
//! std.http.Client opens its connections itself, through the `std.Io` it is given; it has no
//! connect timeout, and the `std.Io.Threaded` of Zig 0.16 cannot do one (its netConnectIp
//! panics when given a timeout). So each agent's client gets an `Io` that is Threaded's in all
//! but two operations: `netConnectIp` here is a non-blocking connect and a poll() until the
//! socket is writable or the deadline passes, and `netClose` first makes the watchdog forget
//! the socket. The TLS handshake that std.http does next reads from a socket the watchdog
//! already holds, so the stream's deadline bounds it too. (Linux only: elsewhere connects are
//! Threaded's, with no connect timeout of their own.)
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const net = std.Io.net;
const watchdog = @import("watchdog.zig");

pub const Dialer = struct {
    threaded: std.Io.Threaded = .init_single_threaded,
    /// Threaded's operations, with the two of this file in place.
    vtable: std.Io.VTable,
    base: *const std.Io.VTable,
    /// While a stream opens its connection (between `begin` and `end`): its watchdog entry...
    watch: ?*watchdog.Watch = null,
    /// ...and when each TCP connect must be done (CLOCK_MONOTONIC ns; 0: no limit).
    deadline_ns: u64 = 0,

    /// Sets `d` up in place (the Io it hands out points into it).
    pub fn init(d: *Dialer) void {
        d.* = .{ .vtable = undefined, .base = undefined };
        d.base = d.threaded.io().vtable;
        d.vtable = d.base.*;
        if (builtin.os.tag == .linux) {
            d.vtable.netConnectIp = connectIp;
            d.vtable.netClose = close;
        }
    }

    /// The Io of every connection of an agent: std.http's and the tunnel's.
    pub fn io(d: *Dialer) std.Io {
        return .{ .userdata = &d.threaded, .vtable = &d.vtable };
    }

    /// Until `end`, connections are opened for the stream watched by `watch`, each TCP
    /// connect within `deadline_ns` (0: no limit of its own; the watchdog's still applies).
    pub fn begin(d: *Dialer, watch: *watchdog.Watch, deadline_ns: u64) void {
        d.watch = watch;
        d.deadline_ns = deadline_ns;
    }

    pub fn end(d: *Dialer) void {
        d.watch = null;
        d.deadline_ns = 0;
    }
};

fn dialerOf(userdata: ?*anyopaque) *Dialer {
    const t: *std.Io.Threaded = @ptrCast(@alignCast(userdata));
    return @fieldParentPtr("threaded", t);
}

const Sockaddr = extern union {
    any: c.sockaddr,
    in: c.sockaddr.in,
    in6: c.sockaddr.in6,

    fn of(ip: *const net.IpAddress) struct { Sockaddr, c.socklen_t } {
        return switch (ip.*) {
            .ip4 => |a| .{ .{ .in = .{ .port = std.mem.nativeToBig(u16, a.port), .addr = @bitCast(a.bytes) } }, @sizeOf(c.sockaddr.in) },
            .ip6 => |a| .{ .{ .in6 = .{ .port = std.mem.nativeToBig(u16, a.port), .flowinfo = a.flow, .addr = a.bytes, .scope_id = a.interface.index } }, @sizeOf(c.sockaddr.in6) },
        };
    }

    fn toIp(s: *const Sockaddr) net.IpAddress {
        if (s.any.family == c.AF.INET6) return .{ .ip6 = .{
            .port = std.mem.bigToNative(u16, s.in6.port),
            .bytes = s.in6.addr,
            .flow = s.in6.flowinfo,
            .interface = .{ .index = s.in6.scope_id },
        } };
        return .{ .ip4 = .{ .port = std.mem.bigToNative(u16, s.in.port), .bytes = @bitCast(s.in.addr) } };
    }
};

fn connectIp(userdata: ?*anyopaque, address: *const net.IpAddress, options: net.IpAddress.ConnectOptions) net.IpAddress.ConnectError!net.Socket {
    const d = dialerOf(userdata);
    if (options.mode != .stream or options.timeout != .none) return d.base.netConnectIp(userdata, address, options);
    const storage, const len = Sockaddr.of(address);
    const family: c_uint = if (address.* == .ip6) c.AF.INET6 else c.AF.INET;
    const rc = c.socket(family, c.SOCK.STREAM | c.SOCK.CLOEXEC | c.SOCK.NONBLOCK, c.IPPROTO.TCP);
    if (rc < 0) return switch (c.errno(rc)) {
        .MFILE => error.ProcessFdQuotaExceeded,
        .NFILE => error.SystemFdQuotaExceeded,
        .NOBUFS, .NOMEM => error.SystemResources,
        .AFNOSUPPORT => error.AddressFamilyUnsupported,
        else => error.Unexpected,
    };
    const fd: c.fd_t = rc;
    // From here a cancel or the turn's deadline shuts this socket down, which wakes the poll.
    const watch = d.watch;
    const claimed = if (watch) |w| watchdog.claimSocket(w, fd) else false;
    errdefer {
        if (claimed) watchdog.releaseSocket(watch.?, fd);
        _ = c.close(fd);
    }
    try connectWithin(fd, &storage.any, len, watch, d.deadline_ns);
    // std.http reads and writes with blocking calls.
    const flags = c.fcntl(fd, c.F.GETFL);
    if (flags < 0) return error.Unexpected;
    var o: c.O = @bitCast(@as(u32, @intCast(flags)));
    o.NONBLOCK = false;
    if (c.fcntl(fd, c.F.SETFL, @as(u32, @bitCast(o))) < 0) return error.Unexpected;
    var local: Sockaddr = undefined;
    var local_len: c.socklen_t = @sizeOf(Sockaddr);
    if (c.getsockname(fd, &local.any, &local_len) != 0) return error.Unexpected;
    return .{ .handle = fd, .address = local.toIp() };
}

/// connect() on a non-blocking socket, then poll() until it is done or `deadline_ns` passes.
fn connectWithin(fd: c.fd_t, addr: *const c.sockaddr, len: c.socklen_t, watch: ?*watchdog.Watch, deadline_ns: u64) net.IpAddress.ConnectError!void {
    if (c.connect(fd, addr, len) == 0) return;
    switch (c.errno(-1)) {
        // Interrupted or not, the connect goes on in the background.
        .INPROGRESS, .INTR => {},
        else => |e| return connectError(e),
    }
    while (true) {
        // The stream was canceled, or its deadline passed, before the socket was registered
        // (and so could not be shut down): give up now.
        if (watch) |w| if (w.fired.load(.acquire) != .none) return error.ConnectionResetByPeer;
        var timeout_ms: c_int = -1;
        if (deadline_ns != 0) {
            const now = watchdog.nowNs();
            if (now >= deadline_ns) {
                if (watch) |w| watchdog.expire(w);
                return error.Timeout;
            }
            timeout_ms = @intCast(@min((deadline_ns - now + std.time.ns_per_ms - 1) / std.time.ns_per_ms, std.math.maxInt(c_int)));
        }
        var pfd = [1]c.pollfd{.{ .fd = fd, .events = c.POLL.OUT, .revents = 0 }};
        const n = c.poll(&pfd, 1, timeout_ms);
        if (n < 0 and c.errno(n) != .INTR) return error.Unexpected;
        if (n > 0) break; // writable, or failed (or shut down by the watchdog)
    }
    var so_error: c_int = 0;
    var so_len: c.socklen_t = @sizeOf(c_int);
    if (c.getsockopt(fd, c.SOL.SOCKET, c.SO.ERROR, &so_error, &so_len) != 0) return error.Unexpected;
    if (so_error != 0) return connectError(@enumFromInt(so_error));
    if (watch) |w| if (w.fired.load(.acquire) != .none) return error.ConnectionResetByPeer;
}

fn connectError(e: c.E) net.IpAddress.ConnectError {
    return switch (e) {
        .CONNREFUSED => error.ConnectionRefused,
        .CONNRESET => error.ConnectionResetByPeer,
        .HOSTUNREACH => error.HostUnreachable,
        .NETUNREACH => error.NetworkUnreachable,
        .NETDOWN => error.NetworkDown,
        .TIMEDOUT => error.Timeout,
        .ADDRNOTAVAIL => error.AddressUnavailable,
        .AFNOSUPPORT => error.AddressFamilyUnsupported,
        .ACCES, .PERM => error.AccessDenied,
        .AGAIN => error.SystemResources,
        else => error.Unexpected,
    };
}

fn close(userdata: ?*anyopaque, handles: []const net.Socket.Handle) void {
    const d = dialerOf(userdata);
    if (d.watch) |w| for (handles) |h| watchdog.releaseSocket(w, h);
    d.base.netClose(userdata, handles);
}
