//! Opening TCP connections, for std.http and for the proxy tunnel alike: each connect is
//! bounded by timeouts.connect_ms, and its socket is known to the watchdog from the start, so
//! a cancel or the turn's deadline also ends a connect that hangs (a host that drops SYNs, a
//! listener whose queue is full).
//!
//! std.http.Client opens its connections itself, through the `std.Io` it is given; it has no
//! connect timeout, and the `std.Io.Threaded` of Zig 0.16 cannot do one (its netConnectIp
//! panics when given a timeout). So each agent's client gets an `Io` that is Threaded's in all
//! but these operations: `netConnectIp` here is a non-blocking connect and a poll() until the
//! socket is writable or the deadline passes, `netClose` first makes the watchdog forget the
//! socket, and `netLookup` is below. The TLS handshake that std.http does next reads from a socket the watchdog
//! already holds, so the stream's deadline bounds it too.
//!
//! Host names are resolved by `netLookup` here (resolve.zig), within the same deadline, and
//! its addresses are tried in order until one connects, the deadline shared. std's
//! `HostName.connect` would connect to every address the lookup gives (on a single-threaded
//! Io its `async` runs each connect at once, in turn) and keep the first that worked: a
//! second address that hangs would hold the connection back until the deadline, then fail the
//! turn. So the lookup connects itself and hands std exactly one address: the one that
//! connected, whose socket `netConnectIp` then returns, or else the last one tried, whose
//! error it returns. (Linux only: elsewhere lookups and connects are Threaded's, with no
//! timeout of their own.)
const std = @import("std");
const builtin = @import("builtin");
const c = std.c;
const net = std.Io.net;
const watchdog = @import("watchdog.zig");
const Sockaddr = @import("sockaddr.zig").Sockaddr;
const resolve = @import("resolve.zig");
const poll_io = @import("poll_io.zig");

pub const Dialer = struct {
    threaded: std.Io.Threaded = .init_single_threaded,
    /// Threaded's operations, with the three of this file in place.
    vtable: std.Io.VTable,
    base: *const std.Io.VTable,
    /// While a stream opens its connection (between `begin` and `end`): its watchdog entry...
    watch: ?*watchdog.Watch = null,
    /// ...and when the lookup and every TCP connect must be done (CLOCK_MONOTONIC ns; 0: no
    /// limit).
    deadline_ns: u64 = 0,
    /// The resolv.conf to read instead of /etc/resolv.conf (PANTO_RESOLV_CONF), if any. Set
    /// before each request; its memory must last until `end`.
    resolv_conf: ?[]const u8 = null,
    /// What the last lookup's connects gave, for the connect std.http does next.
    connected: ?Connected = null,

    const Connected = struct {
        address: net.IpAddress,
        result: net.IpAddress.ConnectError!net.Socket,
    };

    /// Sets `d` up in place (the Io it hands out points into it).
    pub fn init(d: *Dialer) void {
        d.* = .{ .vtable = undefined, .base = undefined };
        d.base = d.threaded.io().vtable;
        d.vtable = d.base.*;
        if (builtin.os.tag == .linux) {
            d.vtable.netLookup = lookup;
            d.vtable.netConnectIp = connectIp;
            d.vtable.netClose = close;
            d.vtable.netRead = read;
            d.vtable.netWrite = write;
        }
    }

    /// The Io of every connection of an agent: std.http's and the tunnel's.
    pub fn io(d: *Dialer) std.Io {
        return .{ .userdata = &d.threaded, .vtable = &d.vtable };
    }

    /// Until `end`, connections are opened for the stream watched by `watch`, the name lookup
    /// and the TCP connects within `deadline_ns` (0: no limit of its own; the watchdog's
    /// still applies).
    pub fn begin(d: *Dialer, watch: *watchdog.Watch, deadline_ns: u64) void {
        d.dropConnected();
        d.watch = watch;
        d.deadline_ns = deadline_ns;
    }

    pub fn end(d: *Dialer) void {
        d.dropConnected();
        d.watch = null;
        d.deadline_ns = 0;
        d.resolv_conf = null;
    }

    /// Closes a socket a lookup connected that nobody took (never, when std.http connects).
    fn dropConnected(d: *Dialer) void {
        const connected = d.connected orelse return;
        d.connected = null;
        const socket = connected.result catch return;
        if (d.watch) |w| watchdog.releaseSocket(w, socket.handle);
        _ = c.close(socket.handle);
    }
};

fn dialerOf(userdata: ?*anyopaque) *Dialer {
    const t: *std.Io.Threaded = @ptrCast(@alignCast(userdata));
    return @fieldParentPtr("threaded", t);
}

/// Resolves `host_name`, then connects to its addresses in order until one connects, all
/// within the deadline; hands std the one address to connect to (see the top of this file).
fn lookup(userdata: ?*anyopaque, host_name: net.HostName, resolved: *std.Io.Queue(net.HostName.LookupResult), options: net.HostName.LookupOptions) net.HostName.LookupError!void {
    const d = dialerOf(userdata);
    const base_io = d.threaded.io();
    defer resolved.close(base_io);
    d.dropConnected();
    var addresses: resolve.Addresses = .{};
    resolve.resolve(base_io, host_name.bytes, .{
        .port = options.port,
        .watch = d.watch,
        .deadline_ns = d.deadline_ns,
        .resolv_conf = d.resolv_conf,
    }, &addresses) catch |err| return switch (err) {
        error.UnknownHostName => error.UnknownHostName,
        error.ResolvConfUnreadable => error.DetectingNetworkConfigurationFailed,
        error.SystemResources => error.SystemResources,
        // The watch says which (the stream reports a timeout or a cancel, not this).
        error.NameServerFailure, error.Timeout, error.Canceled => error.NameServerFailure,
    };
    var last: ?Dialer.Connected = null;
    for (addresses.slice()) |address| {
        if (options.family) |family| if (family != std.meta.activeTag(address)) continue;
        const result = connectStream(d, &address);
        last = .{ .address = address, .result = result };
        const err = if (result) |_| break else |e| e;
        // Another address will not do better: the deadline passed, the stream was canceled,
        // or the process is out of descriptors.
        if (d.watch) |w| if (w.fired.load(.acquire) != .none) break;
        switch (err) {
            error.Timeout, error.ProcessFdQuotaExceeded, error.SystemFdQuotaExceeded, error.SystemResources => break,
            else => {},
        }
    }
    const chosen = last orelse return error.UnknownHostName;
    d.connected = chosen;
    resolved.putOne(base_io, .{ .address = chosen.address }) catch |err| switch (err) {
        error.Closed, error.Canceled => {
            d.dropConnected();
            return error.Unexpected;
        },
    };
    if (options.canonical_name_buffer) |buffer| {
        @memcpy(buffer[0..host_name.bytes.len], host_name.bytes);
        resolved.putOne(base_io, .{ .canonical_name = .{ .bytes = buffer[0..host_name.bytes.len] } }) catch {};
    }
}

fn connectIp(userdata: ?*anyopaque, address: *const net.IpAddress, options: net.IpAddress.ConnectOptions) net.IpAddress.ConnectError!net.Socket {
    const d = dialerOf(userdata);
    if (options.mode != .stream or options.timeout != .none) return d.base.netConnectIp(userdata, address, options);
    // The connect the lookup did for this address.
    if (d.connected) |connected| if (connected.address.eql(address)) {
        d.connected = null;
        return connected.result;
    };
    return connectStream(d, address);
}

/// A TCP connect within the deadline, its socket held by the watchdog.
fn connectStream(d: *Dialer, address: *const net.IpAddress) net.IpAddress.ConnectError!net.Socket {
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
        const n = poll_io.poll(&pfd[0], timeout_ms); // (on a stepped stream's fiber: parked)
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

/// A stepped stream's reads and writes park its fiber instead of blocking (poll_io.zig);
/// every other stream's are Threaded's.
fn read(userdata: ?*anyopaque, fd: net.Socket.Handle, data: [][]u8) net.Stream.Reader.Error!usize {
    const d = poll_io.current() orelse return dialerOf(userdata).base.netRead(userdata, fd, data);
    return poll_io.read(d, fd, data);
}

fn write(userdata: ?*anyopaque, fd: net.Socket.Handle, header: []const u8, data: []const []const u8, splat: usize) net.Stream.Writer.Error!usize {
    const d = poll_io.current() orelse return dialerOf(userdata).base.netWrite(userdata, fd, header, data, splat);
    return poll_io.write(d, fd, header, data, splat);
}
