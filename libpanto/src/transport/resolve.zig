//! Host names to addresses for the agent's dialer (dial.zig), within the connect deadline and
//! ended at once by a cancel.
//!
//! Why panto resolves names itself: Zig 0.16's resolver (std.Io.Threaded's netLookup) asks the
//! nameservers with timeouts of its own (5 s, 2 attempts by default) that nothing from outside
//! can end, and reads the fixed path /etc/resolv.conf. Running it in a worker thread that the
//! stream abandons at the deadline or a cancel (curl's threaded resolver) would leave threads
//! behind, each holding its socket for seconds, and tests could still not point it at a
//! nameserver of their own. A stub resolver is small: a numeric address as is, /etc/hosts,
//! `localhost` (RFC 6761), then A and AAAA queries over UDP to the nameservers of resolv.conf,
//! all at once (as musl and std do), with its search domains, ndots, timeout and attempts. The
//! wait is a poll() on one socket that the stream's watchdog holds, so a cancel or the turn's
//! deadline shuts the socket down and wakes the wait at once (watchdog.zig), and the connect
//! deadline bounds the poll.
//!
//! PANTO_RESOLV_CONF names a resolv.conf to read instead of /etc/resolv.conf; a nameserver in
//! it may carry a port, which resolv.conf itself cannot say (`nameserver 127.0.0.1:5353`,
//! `nameserver [::1]:5353`): the tests' nameservers run on loopback, unprivileged.
const std = @import("std");
const c = std.c;
const Io = std.Io;
const net = Io.net;
const IpAddress = net.IpAddress;
const HostName = net.HostName;
const watchdog = @import("watchdog.zig");
const poll_io = @import("poll_io.zig");
const Sockaddr = @import("sockaddr.zig").Sockaddr;

/// More addresses than this for one name are dropped (std.http's queue holds 32).
pub const max_addresses = 16;

/// A name's addresses, in the order to try them.
pub const Addresses = struct {
    buffer: [max_addresses]IpAddress = undefined,
    len: usize = 0,

    pub fn slice(a: *const Addresses) []const IpAddress {
        return a.buffer[0..a.len];
    }

    fn add(a: *Addresses, address: IpAddress) void {
        if (a.len == a.buffer.len) return;
        for (a.slice()) |*known| if (known.eql(&address)) return;
        a.buffer[a.len] = address;
        a.len += 1;
    }
};

pub const Error = error{
    /// No address for the name: not in /etc/hosts, and the nameservers know none.
    UnknownHostName,
    /// No nameserver gave an answer (in the resolver's own time), or all refused.
    NameServerFailure,
    /// The resolv.conf to read cannot be read.
    ResolvConfUnreadable,
    /// The deadline passed (the watch, if any, records it).
    Timeout,
    /// The stream was canceled, or its watchdog ended the wait.
    Canceled,
    SystemResources,
};

pub const Options = struct {
    port: u16,
    /// The stream's watchdog entry: while the nameservers are asked, it holds the socket.
    watch: ?*watchdog.Watch = null,
    /// CLOCK_MONOTONIC ns (0: none but the resolver's own limits).
    deadline_ns: u64 = 0,
    /// null: /etc/resolv.conf.
    resolv_conf: ?[]const u8 = null,
    hosts: []const u8 = "/etc/hosts",
};

/// The addresses of `name`, in the order to try them: a file's order for /etc/hosts, and from
/// DNS IPv6 and IPv4 alternating, IPv6 first (RFC 8305, section 4).
pub fn resolve(io: Io, name: []const u8, options: Options, out: *Addresses) Error!void {
    out.len = 0;
    if (IpAddress.parse(name, options.port)) |address| {
        out.add(address);
        return;
    } else |_| {}
    if (name.len == 0 or name.len > HostName.max_len) return error.UnknownHostName;
    lookupHosts(io, options.hosts, name, options.port, out);
    if (out.len > 0) return;
    if (isLocalhost(name)) {
        out.add(.{ .ip6 = .loopback(options.port) });
        out.add(.{ .ip4 = .loopback(options.port) });
        return;
    }
    var conf: Conf = .{};
    try conf.load(io, options.resolv_conf);
    var candidates: Candidates = .init(name, &conf);
    var failure: Error = error.UnknownHostName;
    while (candidates.next()) |candidate| {
        askNameservers(io, &conf, candidate, options, out) catch |err| switch (err) {
            error.UnknownHostName => continue,
            // A search domain whose nameservers fail does not hide the name itself.
            error.NameServerFailure => {
                failure = err;
                continue;
            },
            else => return err,
        };
        if (out.len > 0) return;
    }
    return failure;
}

/// "localhost", "localhost." and names under it.
fn isLocalhost(name: []const u8) bool {
    const n = std.mem.trimEnd(u8, name, ".");
    return std.ascii.eqlIgnoreCase(n, "localhost") or
        (n.len > ".localhost".len and std.ascii.endsWithIgnoreCase(n, ".localhost"));
}

// ---- /etc/hosts -------------------------------------------------------------------------

/// Adds the addresses /etc/hosts gives `name`, in the file's order. A file that cannot be
/// read holds nothing.
fn lookupHosts(io: Io, path: []const u8, name: []const u8, port: u16, out: *Addresses) void {
    const file = Io.Dir.cwd().openFile(io, path, .{}) catch return;
    defer file.close(io);
    var buffer: [512]u8 = undefined;
    var reader = file.reader(io, &buffer);
    hostsFrom(&reader.interface, name, port, out);
}

fn hostsFrom(r: *Io.Reader, name: []const u8, port: u16, out: *Addresses) void {
    const wanted = std.mem.trimEnd(u8, name, ".");
    while (true) {
        const line = nextLine(r) orelse return;
        const content = line[0 .. std.mem.indexOfScalar(u8, line, '#') orelse line.len];
        var tokens = std.mem.tokenizeAny(u8, content, " \t\r");
        const ip_text = tokens.next() orelse continue;
        while (tokens.next()) |alias| {
            if (!std.ascii.eqlIgnoreCase(std.mem.trimEnd(u8, alias, "."), wanted)) continue;
            if (IpAddress.parse(ip_text, port)) |address| out.add(address) else |_| {}
            break;
        }
    }
}

/// The next line of a configuration file, skipping lines longer than the reader's buffer
/// (none that matters is); null at the end or on a read error.
fn nextLine(r: *Io.Reader) ?[]const u8 {
    while (true) {
        return r.takeDelimiter('\n') catch |err| switch (err) {
            error.StreamTooLong => {
                _ = r.discardDelimiterInclusive('\n') catch return null;
                continue;
            },
            error.ReadFailed => return null,
        };
    }
}

// ---- resolv.conf --------------------------------------------------------------------------

const Conf = struct {
    nameservers_buffer: [max_nameservers]IpAddress = undefined,
    nameservers_len: usize = 0,
    /// The search domains, separated by spaces.
    search_buffer: [HostName.max_len]u8 = undefined,
    search_len: usize = 0,
    ndots: u32 = 1,
    timeout_s: u32 = 5,
    attempts: u32 = 2,

    /// resolv.conf(5): at most 3 nameservers are used.
    const max_nameservers = 3;

    fn nameservers(conf: *const Conf) []const IpAddress {
        return conf.nameservers_buffer[0..conf.nameservers_len];
    }

    fn search(conf: *const Conf) []const u8 {
        return conf.search_buffer[0..conf.search_len];
    }

    /// Reads `path` (null: /etc/resolv.conf; that one missing means a nameserver on
    /// 127.0.0.1, as in glibc and musl).
    fn load(conf: *Conf, io: Io, path: ?[]const u8) Error!void {
        const file = Io.Dir.cwd().openFile(io, path orelse "/etc/resolv.conf", .{}) catch {
            if (path != null) return error.ResolvConfUnreadable;
            conf.finish();
            return;
        };
        defer file.close(io);
        var buffer: [512]u8 = undefined;
        var reader = file.reader(io, &buffer);
        conf.parse(io, &reader.interface);
        if (reader.err != null) return error.ResolvConfUnreadable;
    }

    fn parse(conf: *Conf, io: Io, r: *Io.Reader) void {
        defer conf.finish();
        while (true) {
            const line = nextLine(r) orelse return;
            const content = line[0 .. std.mem.indexOfAny(u8, line, "#;") orelse line.len];
            var tokens = std.mem.tokenizeAny(u8, content, " \t\r");
            const directive = tokens.next() orelse continue;
            if (std.mem.eql(u8, directive, "nameserver")) {
                const text = tokens.next() orelse continue;
                if (conf.nameservers_len == max_nameservers) continue;
                const address = parseNameserver(io, text) orelse continue;
                conf.nameservers_buffer[conf.nameservers_len] = address;
                conf.nameservers_len += 1;
            } else if (std.mem.eql(u8, directive, "search") or std.mem.eql(u8, directive, "domain")) {
                // The last line wins; domains that do not fit are left out.
                conf.search_len = 0;
                while (tokens.next()) |domain| {
                    const sep: usize = @intFromBool(conf.search_len > 0);
                    if (conf.search_len + sep + domain.len > conf.search_buffer.len) break;
                    if (sep == 1) conf.search_buffer[conf.search_len] = ' ';
                    @memcpy(conf.search_buffer[conf.search_len + sep ..][0..domain.len], domain);
                    conf.search_len += sep + domain.len;
                }
            } else if (std.mem.eql(u8, directive, "options")) {
                while (tokens.next()) |option| {
                    const colon = std.mem.indexOfScalar(u8, option, ':') orelse continue;
                    const value = std.fmt.parseInt(u32, option[colon + 1 ..], 10) catch continue;
                    const key = option[0..colon];
                    // The limits of glibc's resolver.
                    if (std.mem.eql(u8, key, "ndots")) conf.ndots = @min(value, 15);
                    if (std.mem.eql(u8, key, "timeout")) conf.timeout_s = @max(@min(value, 30), 1);
                    if (std.mem.eql(u8, key, "attempts")) conf.attempts = @max(@min(value, 5), 1);
                }
            }
        }
    }

    fn finish(conf: *Conf) void {
        if (conf.nameservers_len > 0) return;
        conf.nameservers_buffer[0] = .{ .ip4 = .loopback(53) };
        conf.nameservers_len = 1;
    }
};

/// "1.2.3.4", "fe80::1%eth0", or with a port (panto's extension): "1.2.3.4:5353",
/// "[::1]:5353".
fn parseNameserver(io: Io, text: []const u8) ?IpAddress {
    var host = text;
    var port: u16 = 53;
    if (std.mem.startsWith(u8, text, "[")) {
        const close = std.mem.indexOfScalar(u8, text, ']') orelse return null;
        host = text[1..close];
        const rest = text[close + 1 ..];
        if (rest.len > 0) {
            if (rest[0] != ':') return null;
            port = std.fmt.parseInt(u16, rest[1..], 10) catch return null;
        }
    } else if (std.mem.indexOfScalar(u8, text, ':')) |colon| {
        // One colon: an IPv4 address and a port; more: an IPv6 address.
        if (std.mem.indexOfScalarPos(u8, text, colon + 1, ':') == null) {
            host = text[0..colon];
            port = std.fmt.parseInt(u16, text[colon + 1 ..], 10) catch return null;
        }
    }
    return IpAddress.resolve(io, host, port) catch null;
}

/// The names to ask for, in order: with each search domain first when the name has fewer dots
/// than ndots (and no final dot), then the name as it is.
const Candidates = struct {
    name: []const u8,
    domains: std.mem.TokenIterator(u8, .any),
    done: bool = false,
    buffer: [HostName.max_len]u8 = undefined,

    fn init(name: []const u8, conf: *const Conf) Candidates {
        const absolute = std.mem.endsWith(u8, name, ".");
        const dots = std.mem.countScalar(u8, name, '.');
        const search = if (absolute or dots >= conf.ndots) "" else conf.search();
        return .{ .name = std.mem.trimEnd(u8, name, "."), .domains = std.mem.tokenizeAny(u8, search, " \t") };
    }

    fn next(it: *Candidates) ?[]const u8 {
        while (it.domains.next()) |domain| {
            const d = std.mem.trim(u8, domain, ".");
            if (it.name.len + 1 + d.len > it.buffer.len or d.len == 0) continue;
            @memcpy(it.buffer[0..it.name.len], it.name);
            it.buffer[it.name.len] = '.';
            @memcpy(it.buffer[it.name.len + 1 ..][0..d.len], d);
            const full = it.buffer[0 .. it.name.len + 1 + d.len];
            HostName.validate(full) catch continue;
            return full;
        }
        if (it.done) return null;
        it.done = true;
        HostName.validate(it.name) catch return null;
        return it.name;
    }
};

// ---- DNS over UDP ---------------------------------------------------------------------------

const QType = enum(u16) { a = 1, aaaa = 28 };

/// Header, the name (at most 255 bytes as labels), type and class.
const max_query = 12 + HostName.max_len + 2 + 4;

const Query = struct {
    qtype: QType,
    bytes_buffer: [max_query]u8 = undefined,
    len: usize = 0,
    /// An answer was taken (addresses, or none), or every nameserver failed it.
    done: bool = false,
    /// Bit i: nameserver i answered SERVFAIL or refused.
    failed_by: u8 = 0,
    /// The addresses of its answer, in the answer's order.
    found: Addresses = .{},

    fn bytes(q: *const Query) []const u8 {
        return q.bytes_buffer[0..q.len];
    }
};

/// Writes a recursive query for `name` (a valid host name) into `q`.
fn writeQuery(q: *[max_query]u8, id: u16, name: []const u8, qtype: QType) usize {
    std.mem.writeInt(u16, q[0..2], id, .big);
    q[2..12].* = .{ 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0 }; // RD; one question
    var i: usize = 12;
    var labels = std.mem.tokenizeScalar(u8, name, '.');
    while (labels.next()) |label| {
        q[i] = @intCast(label.len); // at most 63: the name is valid
        @memcpy(q[i + 1 ..][0..label.len], label);
        i += 1 + label.len;
    }
    q[i] = 0;
    std.mem.writeInt(u16, q[i + 1 ..][0..2], @intFromEnum(qtype), .big);
    std.mem.writeInt(u16, q[i + 3 ..][0..2], 1, .big); // IN
    return i + 5;
}

/// Asks every nameserver for the A and AAAA records of `name` at once, resending each
/// unanswered query every timeout/attempts, until both are answered, the resolver's own limit
/// (timeout) passes, or the deadline or a cancel ends the wait.
fn askNameservers(io: Io, conf: *const Conf, name: []const u8, options: Options, out: *Addresses) Error!void {
    var queries: [2]Query = .{ .{ .qtype = .aaaa }, .{ .qtype = .a } };
    for (&queries) |*q| {
        var id: [2]u8 = undefined;
        io.random(&id);
        q.len = writeQuery(&q.bytes_buffer, std.mem.readInt(u16, &id, .big), name, q.qtype);
    }
    if (queries[0].bytes()[0] == queries[1].bytes()[0] and queries[0].bytes()[1] == queries[1].bytes()[1]) queries[1].bytes_buffer[1] +%= 1;

    var socket = try UdpSocket.open(conf.nameservers());
    defer socket.close();
    const watch = options.watch;
    const watched = if (watch) |w| watchdog.claimSocket(w, socket.fd) else false;
    defer if (watched) watchdog.releaseSocket(watch.?, socket.fd);

    const start = watchdog.nowNs();
    const own_limit = start + @as(u64, conf.timeout_s) * std.time.ns_per_s;
    const resend_every = @as(u64, conf.timeout_s) * std.time.ns_per_s / conf.attempts;
    var resend_at: u64 = 0;
    while (true) {
        if (watch) |w| switch (w.fired.load(.acquire)) {
            .canceled => return error.Canceled,
            .timeout => return error.Timeout,
            // Canceled while the watchdog held another socket: say so as it would have.
            .none => if (w.canceled.load(.acquire)) {
                _ = w.fired.cmpxchgStrong(.none, .canceled, .acq_rel, .acquire);
                return error.Canceled;
            },
        };
        const now = watchdog.nowNs();
        if (options.deadline_ns != 0 and now >= options.deadline_ns) {
            if (watch) |w| watchdog.expire(w);
            return error.Timeout;
        }
        if (now >= own_limit) break;
        if (now >= resend_at) {
            for (&queries) |*q| if (!q.done) socket.sendAll(q.bytes());
            resend_at = now + resend_every;
        }
        var wake = @min(resend_at, own_limit);
        if (options.deadline_ns != 0) wake = @min(wake, options.deadline_ns);
        // Not held by the watchdog (it holds another socket of the stream's): look often.
        if (watch != null and !watched) wake = @min(wake, now + 20 * std.time.ns_per_ms);
        const timeout_ms: c_int = @intCast(@min((wake - now + std.time.ns_per_ms - 1) / std.time.ns_per_ms, std.math.maxInt(c_int)));
        var pfd = [1]c.pollfd{.{ .fd = socket.fd, .events = c.POLL.IN, .revents = 0 }};
        const n = poll_io.poll(&pfd[0], timeout_ms); // (on a stepped stream's fiber: parked)
        if (n < 0 and c.errno(n) != .INTR) return error.SystemResources;
        if (n > 0) socket.receive(&queries);
        if (queries[0].done and queries[1].done) break;
    }
    // IPv6 and IPv4 alternating, IPv6 first.
    const six = queries[0].found.slice();
    const four = queries[1].found.slice();
    for (0..@max(six.len, four.len)) |i| {
        if (i < six.len) out.add(six[i]);
        if (i < four.len) out.add(four[i]);
    }
    for (out.buffer[0..out.len]) |*address| address.setPort(options.port);
    if (out.len > 0) return;
    // Nothing: a name without addresses, unless a query went unanswered or was refused.
    for (queries) |q| if (!q.done or q.failed_by != 0) return error.NameServerFailure;
    return error.UnknownHostName;
}

/// One UDP socket for every nameserver: IPv6 (IPv4 ones mapped) when one of them is IPv6,
/// unless the system has no IPv6; then the IPv4 ones only.
const UdpSocket = struct {
    fd: c.fd_t,
    ip6: bool,
    servers: []const IpAddress,

    fn open(servers: []const IpAddress) Error!UdpSocket {
        var any_ip6 = false;
        for (servers) |s| any_ip6 = any_ip6 or s == .ip6;
        if (any_ip6) {
            const fd = c.socket(c.AF.INET6, c.SOCK.DGRAM | c.SOCK.CLOEXEC | c.SOCK.NONBLOCK, 0);
            if (fd >= 0) {
                const off: c_int = 0;
                _ = c.setsockopt(fd, c.IPPROTO.IPV6, std.os.linux.IPV6.V6ONLY, std.mem.asBytes(&off), @sizeOf(c_int));
                return .{ .fd = fd, .ip6 = true, .servers = servers };
            }
        }
        const fd = c.socket(c.AF.INET, c.SOCK.DGRAM | c.SOCK.CLOEXEC | c.SOCK.NONBLOCK, 0);
        if (fd < 0) return error.SystemResources;
        return .{ .fd = fd, .ip6 = false, .servers = servers };
    }

    fn close(s: *UdpSocket) void {
        _ = c.close(s.fd);
    }

    /// The address to send to nameserver `server` on this socket, or null if it cannot.
    fn destination(s: *const UdpSocket, server: IpAddress) ?struct { Sockaddr, c.socklen_t } {
        if (s.ip6) return Sockaddr.of(&.{ .ip6 = .fromAny(server) });
        if (server == .ip6) return null;
        return Sockaddr.of(&server);
    }

    /// Sends `query` to every nameserver; a failed send is a nameserver that does not answer.
    fn sendAll(s: *const UdpSocket, query: []const u8) void {
        for (s.servers) |server| {
            const to, const to_len = s.destination(server) orelse continue;
            _ = c.sendto(s.fd, query.ptr, query.len, 0, &to.any, to_len);
        }
    }

    /// Reads every datagram waiting, and takes those that answer a query.
    fn receive(s: *const UdpSocket, queries: []Query) void {
        var packet: [1500]u8 = undefined;
        while (true) {
            var from: Sockaddr = undefined;
            var from_len: c.socklen_t = @sizeOf(Sockaddr);
            const rc = c.recvfrom(s.fd, &packet, packet.len, 0, &from.any, &from_len);
            if (rc <= 0) return; // nothing more (or shut down: the caller sees why)
            const server = s.serverIndex(from.bytes(from_len)) orelse continue;
            takeAnswer(packet[0..@intCast(rc)], server, s.servers.len, queries);
        }
    }

    fn serverIndex(s: *const UdpSocket, from: []const u8) ?usize {
        for (s.servers, 0..) |server, i| {
            const to, const to_len = s.destination(server) orelse continue;
            if (std.mem.eql(u8, to.bytes(to_len), from)) return i;
        }
        return null;
    }
};

/// Matches a datagram from nameserver `server` to its query (same id, question and a
/// response), and takes its addresses. Anything else is ignored.
fn takeAnswer(reply: []const u8, server: usize, server_count: usize, queries: []Query) void {
    if (reply.len < 12 or reply[2] & 0x80 == 0) return; // not a response
    const q = for (queries) |*q| {
        const asked = q.bytes();
        if (reply[0] != asked[0] or reply[1] != asked[1]) continue;
        // The question, as asked (names compare case-insensitively).
        if (reply.len < asked.len or !std.ascii.eqlIgnoreCase(reply[12..asked.len], asked[12..])) return;
        if (std.mem.readInt(u16, reply[4..6], .big) != 1) return;
        break q;
    } else return;
    if (q.done) return;
    switch (reply[3] & 15) {
        0, 3 => {}, // an answer, or "no such name"
        else => {
            // SERVFAIL, refused...: this nameserver will not answer this query.
            q.failed_by |= @as(u8, 1) << @intCast(server);
            if (@popCount(q.failed_by) == server_count) q.done = true;
            return;
        },
    }
    q.done = true;
    var records = HostName.DnsResponse.init(reply) catch return;
    while (records.next() catch return) |record| {
        const data = record.packet[record.data_off..][0..record.data_len];
        switch (record.rr) {
            .A => if (q.qtype == .a and data.len == 4) q.found.add(.{ .ip4 = .{ .bytes = data[0..4].*, .port = 0 } }),
            .AAAA => if (q.qtype == .aaaa and data.len == 16) q.found.add(.{ .ip6 = .{ .bytes = data[0..16].*, .port = 0 } }),
            else => {},
        }
    }
}

test "/etc/hosts: every line naming the host, in the file's order; comments and long lines skipped" {
    const text = "# comment 10.9.9.9 api.panto.test\n" ++
        "127.0.0.1 localhost\n" ++
        "10.0.0.1\tother API.Panto.Test # an alias, any case\n" ++
        "10.0.0.2 " ++ "x" ** 600 ++ " api.panto.test\n" ++
        "not-an-address api.panto.test\n" ++
        "fd00::1 api.panto.test.\n" ++
        "10.0.0.1 api.panto.test\n" ++
        "10.0.0.3 api.panto.test";
    var r: Io.Reader = .fixed(text);
    var out: Addresses = .{};
    hostsFrom(&r, "api.panto.test", 443, &out);
    var buf: [128]u8 = undefined;
    var w: Io.Writer = .fixed(&buf);
    for (out.slice()) |a| try w.print("{f} ", .{a});
    // The 600-byte line is longer than the line buffer of a real file; a fixed reader holds it.
    try std.testing.expectEqualStrings("10.0.0.1:443 10.0.0.2:443 [fd00::1]:443 10.0.0.3:443 ", w.buffered());
}

test "resolv.conf: nameservers (with panto's ports), options within glibc's limits, search" {
    const text = "; comment\nnameserver 10.0.0.53\nnameserver 127.0.0.1:5353 # a port\n" ++
        "nameserver [::1]:5354\nnameserver 10.0.0.54\nnameserver bogus\n" ++
        "options ndots:99 timeout:0 attempts:100 edns0\n" ++
        "search a.example " ++ "b" ** 250 ++ " c.example\n";
    var r: Io.Reader = .fixed(text);
    var conf: Conf = .{};
    conf.parse(std.testing.io, &r);
    var buf: [128]u8 = undefined;
    var w: Io.Writer = .fixed(&buf);
    for (conf.nameservers()) |a| try w.print("{f} ", .{a});
    try std.testing.expectEqualStrings("10.0.0.53:53 127.0.0.1:5353 [::1]:5354 ", w.buffered());
    try std.testing.expectEqual(@as(u32, 15), conf.ndots);
    try std.testing.expectEqual(@as(u32, 1), conf.timeout_s);
    try std.testing.expectEqual(@as(u32, 5), conf.attempts);
    // The domain that does not fit is left out, and the ones after it.
    try std.testing.expectEqualStrings("a.example", conf.search());

    var empty: Io.Reader = .fixed("options ndots:2\n");
    var none: Conf = .{};
    none.parse(std.testing.io, &empty);
    try std.testing.expectEqual(@as(usize, 1), none.nameservers().len);
    try std.testing.expect(none.nameservers()[0].eql(&.{ .ip4 = .loopback(53) }));
}

test "search domains come before the name itself when it has fewer dots than ndots" {
    var conf: Conf = .{};
    var r: Io.Reader = .fixed("search corp.example svc.local\noptions ndots:2\n");
    conf.parse(std.testing.io, &r);
    const expectCandidates = struct {
        fn f(cf: *const Conf, name: []const u8, expected: []const []const u8) !void {
            var it: Candidates = .init(name, cf);
            for (expected) |e| try std.testing.expectEqualStrings(e, it.next().?);
            try std.testing.expect(it.next() == null);
        }
    }.f;
    try expectCandidates(&conf, "proxy", &.{ "proxy.corp.example", "proxy.svc.local", "proxy" });
    try expectCandidates(&conf, "api.panto.test", &.{"api.panto.test"});
    try expectCandidates(&conf, "proxy.", &.{"proxy"});
}

test "a reply is taken only as the answer to its own query; SERVFAIL from every nameserver ends it" {
    var queries: [2]Query = .{ .{ .qtype = .aaaa }, .{ .qtype = .a } };
    queries[0].len = writeQuery(&queries[0].bytes_buffer, 0x1234, "api.panto.test", .aaaa);
    queries[1].len = writeQuery(&queries[1].bytes_buffer, 0x5678, "api.panto.test", .a);
    try std.testing.expectEqualSlices(u8, "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03api\x05panto\x04test\x00\x00\x1c\x00\x01", queries[0].bytes());
    // The A query, answered with one address.
    var reply: [64]u8 = undefined;
    const q = queries[1].bytes();
    @memcpy(reply[0..q.len], q);
    reply[2] = 0x81;
    reply[3] = 0x80;
    reply[7] = 1; // one answer
    const record = "\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x00\x00\x07";
    @memcpy(reply[q.len..][0..record.len], record);
    const answer = reply[0 .. q.len + record.len];

    var not_response = reply;
    not_response[2] = 0x01;
    takeAnswer(not_response[0..answer.len], 0, 2, &queries);
    var other_name = reply;
    other_name[13] = 'x';
    takeAnswer(other_name[0..answer.len], 0, 2, &queries);
    takeAnswer(answer[0..11], 0, 2, &queries);
    try std.testing.expect(!queries[1].done);
    // Cut anywhere, the answer never reads past its end.
    for (0..answer.len) |cut| {
        var copy = queries;
        takeAnswer(answer[0..cut], 0, 2, &copy);
    }
    takeAnswer(answer, 0, 2, &queries);
    try std.testing.expect(queries[1].done);
    try std.testing.expectEqual(@as(usize, 1), queries[1].found.len);
    try std.testing.expect(queries[1].found.slice()[0].eql(&.{ .ip4 = .{ .bytes = .{ 10, 0, 0, 7 }, .port = 0 } }));

    var servfail = queries[0].bytes_buffer;
    servfail[2] = 0x81;
    servfail[3] = 0x82;
    takeAnswer(servfail[0..queries[0].len], 1, 2, &queries);
    try std.testing.expect(!queries[0].done);
    takeAnswer(servfail[0..queries[0].len], 0, 2, &queries);
    try std.testing.expect(queries[0].done and queries[0].found.len == 0);
}
