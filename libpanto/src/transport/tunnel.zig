//! HTTPS through an HTTP proxy: panto opens the CONNECT tunnel itself and speaks TLS inside it.
//!
//! std.http 0.16 cannot be used for this: its `connectProxied` sends the CONNECT without
//! Proxy-Authorization, then speaks plain HTTP inside the tunnel, the API key included. Here:
//! a TCP connection to the proxy (through the agent's dialer, so bounded by connect_ms and
//! watched), `CONNECT host:port` with Proxy-Authorization when the proxy URL has credentials,
//! the proxy's answer read with std.http's head reader, then std.crypto.tls over the tunnel,
//! verifying the provider's certificate and host name against the client's CA bundle exactly
//! as std.http does on a direct connection. The request written inside is the one std.http
//! would write (`send`), and the answer is read with std.http's own reader, as a
//! `std.http.Client.Request` whose connection is this tunnel: the stream then reads the head,
//! the body (chunked, Content-Length or to the end), errors and trailers the same way on both
//! paths.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Io = std.Io;
const net = Io.net;
const http = std.http;
const Client = http.Client;
const tls = std.crypto.tls;

/// Where to tunnel through: an `http://` proxy.
pub const Proxy = struct {
    host: []const u8,
    port: u16,
    /// The Proxy-Authorization value ("Basic ..."), from the proxy URL's user:password.
    authorization: ?[]const u8 = null,
};

/// Why a tunnel could not be opened, worded for the user in `Problem`. Nothing in it comes from
/// the proxy URL's credentials.
pub const OpenError = error{
    OutOfMemory,
    /// The proxy could not be reached (TCP).
    ProxyUnreachable,
    /// The proxy answered CONNECT with a status other than 2xx (407 included).
    ProxyRefused,
    /// The proxy closed the connection, or it failed, before a complete answer to CONNECT.
    ProxyClosed,
    /// The proxy's answer to CONNECT is not HTTP.
    ProxyBadAnswer,
    /// The TLS handshake with the provider, inside the tunnel, failed (certificate, host name).
    Tls,
};

/// The message that goes with an OpenError.
pub const Problem = struct {
    buffer: [256]u8 = undefined,
    len: usize = 0,

    pub fn message(p: *const Problem) []const u8 {
        return p.buffer[0..p.len];
    }

    fn set(p: *Problem, err: OpenError, comptime fmt: []const u8, args: anytype) OpenError {
        // A message too long for the buffer is cut short.
        var w: Io.Writer = .fixed(&p.buffer);
        w.print(fmt, args) catch {};
        p.len = w.end;
        return err;
    }
};

/// The longest answer head a proxy may send to CONNECT.
const max_connect_head = 8 * 1024;
/// The plaintext written into TLS is buffered this much before it is encrypted.
const tls_write_buffer_len = 4 * 1024;

/// Where a tunnel leads: an agent's next request reuses a kept-alive tunnel only for the same
/// proxy (and credentials), host and port.
pub const Key = struct {
    proxy: Proxy,
    host: []const u8,
    port: u16,

    fn eql(a: Key, b: Key) bool {
        const auth_a = a.proxy.authorization orelse "";
        const auth_b = b.proxy.authorization orelse "";
        return a.port == b.port and a.proxy.port == b.proxy.port and
            (a.proxy.authorization == null) == (b.proxy.authorization == null) and
            std.mem.eql(u8, auth_a, auth_b) and std.ascii.eqlIgnoreCase(a.host, b.host) and
            std.ascii.eqlIgnoreCase(a.proxy.host, b.proxy.host);
    }
};

pub const Tunnel = struct {
    gpa: Allocator,
    io: Io,
    /// Where it leads, its strings in `key_strings`.
    key: Key,
    key_strings: []u8,
    /// The agent's number for it (see connection_log.zig).
    number: u32 = 0,
    /// Its last response asked to close the connection (or was HTTP/1.0): not to be reused.
    closing: bool = false,
    stream: net.Stream,
    /// The socket, both ways: the CONNECT exchange, then TLS records.
    socket_reader: net.Stream.Reader,
    socket_writer: net.Stream.Writer,
    /// The provider's side of the conversation, decrypted.
    tls: tls.Client,
    /// The buffers above, in one allocation.
    buffers: []u8,

    /// Connects to `proxy`, asks it for a tunnel to `host:port` and does the TLS handshake
    /// with `host` inside it. Trust comes from the client's CA bundle, which must be loaded.
    pub fn open(client: *Client, key: Key, problem: *Problem) OpenError!*Tunnel {
        const proxy = key.proxy;
        const host = key.host;
        const port = key.port;
        const gpa = client.allocator;
        const io = client.io;
        const t = try gpa.create(Tunnel);
        errdefer gpa.destroy(t);
        const auth = proxy.authorization orelse "";
        t.key_strings = try gpa.alloc(u8, proxy.host.len + auth.len + host.len);
        errdefer gpa.free(t.key_strings);
        @memcpy(t.key_strings[0..proxy.host.len], proxy.host);
        @memcpy(t.key_strings[proxy.host.len..][0..auth.len], auth);
        @memcpy(t.key_strings[proxy.host.len + auth.len ..], host);
        t.key = .{
            .proxy = .{
                .host = t.key_strings[0..proxy.host.len],
                .port = proxy.port,
                .authorization = if (proxy.authorization != null) t.key_strings[proxy.host.len..][0..auth.len] else null,
            },
            .host = t.key_strings[proxy.host.len + auth.len ..],
            .port = port,
        };
        t.number = 0;
        t.closing = false;
        // The TLS reader holds a whole record and then an HTTP response head: std.http's sizes.
        const socket_len = tls.Client.min_buffer_len;
        const tls_read_len = tls.Client.min_buffer_len + client.read_buffer_size;
        t.buffers = try gpa.alloc(u8, 2 * socket_len + tls_read_len + tls_write_buffer_len);
        errdefer gpa.free(t.buffers);
        const socket_read_buffer = t.buffers[0..socket_len];
        const socket_write_buffer = t.buffers[socket_len..][0..socket_len];
        const tls_read_buffer = t.buffers[2 * socket_len ..][0..tls_read_len];
        const tls_write_buffer = t.buffers[2 * socket_len + tls_read_len ..][0..tls_write_buffer_len];

        const proxy_host: net.HostName = net.HostName.init(proxy.host) catch
            return problem.set(error.ProxyUnreachable, "the proxy's host name \"{s}\" is not valid", .{proxy.host});
        t.stream = proxy_host.connect(io, proxy.port, .{ .mode = .stream }) catch |err|
            return problem.set(error.ProxyUnreachable, "could not reach the proxy {s}:{d}: {s}", .{ proxy.host, proxy.port, @errorName(err) });
        errdefer t.stream.close(io);
        t.gpa = gpa;
        t.io = io;
        t.socket_reader = t.stream.reader(io, socket_read_buffer);
        t.socket_writer = t.stream.writer(io, socket_write_buffer);

        try t.connect(proxy, host, port, problem);

        var entropy: [tls.Client.Options.entropy_len]u8 = undefined;
        io.random(&entropy);
        t.tls = tls.Client.init(&t.socket_reader.interface, &t.socket_writer.interface, .{
            .host = .{ .explicit = host },
            .ca = .{ .bundle = .{
                .gpa = gpa,
                .io = io,
                .lock = &client.ca_bundle_lock,
                .bundle = &client.ca_bundle,
            } },
            .read_buffer = tls_read_buffer,
            .write_buffer = tls_write_buffer,
            .entropy = &entropy,
            .realtime_now = Io.Clock.real.now(io),
            // As std.http: HTTP framing (Content-Length, the last chunk) shows a cut body.
            .allow_truncation_attacks = true,
        }) catch |err| {
            const cause: anyerror = switch (err) {
                error.ReadFailed => t.socket_reader.err orelse err,
                error.WriteFailed => t.socket_writer.err orelse err,
                else => err,
            };
            return problem.set(error.Tls, "TLS with {s} through the proxy {s}:{d} failed: {s}", .{ host, proxy.host, proxy.port, @errorName(cause) });
        };
        return t;
    }

    /// The CONNECT request and the proxy's answer, on the bare socket.
    fn connect(t: *Tunnel, proxy: Proxy, host: []const u8, port: u16, problem: *Problem) OpenError!void {
        const target: std.Uri = .{ .scheme = "https", .host = .{ .raw = host }, .port = port };
        const w = &t.socket_writer.interface;
        sendConnect(w, target, proxy.authorization) catch
            return problem.set(error.ProxyClosed, "the connection to the proxy {s}:{d} failed while asking for a tunnel: {s}", .{ proxy.host, proxy.port, errorName(t.socket_writer.err) });

        var head_reader: http.Reader = .{
            .in = &t.socket_reader.interface,
            .state = .ready,
            .interface = undefined,
            .max_head_len = max_connect_head,
        };
        const bytes = head_reader.receiveHead() catch |err| return switch (err) {
            error.HttpConnectionClosing, error.HttpRequestTruncated => problem.set(error.ProxyClosed, "the proxy {s}:{d} closed the connection without answering CONNECT {f}", .{ proxy.host, proxy.port, fmtAuthority(&target) }),
            error.HttpHeadersOversize => problem.set(error.ProxyBadAnswer, "the proxy {s}:{d} answered CONNECT with a head larger than {d} bytes", .{ proxy.host, proxy.port, max_connect_head }),
            error.ReadFailed => problem.set(error.ProxyClosed, "the connection to the proxy {s}:{d} failed while waiting for its answer to CONNECT: {s}", .{ proxy.host, proxy.port, errorName(t.socket_reader.err) }),
        };
        const head = Client.Response.Head.parse(bytes) catch
            return problem.set(error.ProxyBadAnswer, "the proxy {s}:{d} did not answer CONNECT with HTTP", .{ proxy.host, proxy.port });
        // A 2xx answer has no body (RFC 9110 9.3.6): what follows is the provider's TLS.
        if (head.status.class() == .success) return;
        const code: u16 = @intFromEnum(head.status);
        const hint: []const u8 = if (code != 407) "" else if (proxy.authorization == null)
            " (the proxy wants credentials: put them in the proxy URL, http://user:password@host:port)"
        else
            " (the proxy refused the credentials of the proxy URL)";
        return problem.set(error.ProxyRefused, "the proxy {s}:{d} refused the tunnel to {f}: {d} {f}{s}", .{ proxy.host, proxy.port, fmtAuthority(&target), code, printable(head.reason), hint });
    }

    /// A request to be sent inside the tunnel, like `std.http.Client.request` makes one for a
    /// connection of its own. `uri` and the options' memory must outlive it.
    pub fn request(t: *Tunnel, client: *Client, method: http.Method, uri: std.Uri, options: Client.RequestOptions) Client.Request {
        return .{
            .uri = uri,
            .client = client,
            // No std.http connection: the tunnel is kept alive by its owner (keep_alive.zig).
            .connection = null,
            .reader = .{
                .in = &t.tls.reader,
                .state = .ready,
                .interface = undefined,
                .max_head_len = client.read_buffer_size,
            },
            .keep_alive = options.keep_alive,
            .method = method,
            .version = options.version,
            .transfer_encoding = .none,
            .redirect_behavior = options.redirect_behavior,
            .handle_continue = options.handle_continue,
            .headers = options.headers,
            .extra_headers = options.extra_headers,
            .privileged_headers = options.privileged_headers,
        };
    }

    /// Writes the request and its body inside the tunnel, as std.http's
    /// `Request.sendBodyComplete` does on a direct connection: origin form, the same headers
    /// for the same options.
    pub fn sendBodyComplete(t: *Tunnel, r: *Client.Request, body: []const u8) Io.Writer.Error!void {
        r.transfer_encoding = .{ .content_length = body.len };
        const w = &t.tls.writer;
        const uri = r.uri;
        try w.print("{s} {f} {s}\r\n", .{ @tagName(r.method), uri.fmt(.{ .path = true, .query = true }), @tagName(r.version) });
        if (try header(w, "host: ", r.headers.host)) try w.print("host: {f}\r\n", .{uri.fmt(.{ .authority = true })});
        if (try header(w, "authorization: ", r.headers.authorization)) {
            if (uri.user != null or uri.password != null) {
                try w.writeAll("authorization: ");
                try Client.basic_authorization.write(uri, w);
                try w.writeAll("\r\n");
            }
        }
        if (try header(w, "user-agent: ", r.headers.user_agent)) try w.writeAll("user-agent: zig/" ++ @import("builtin").zig_version_string ++ " (std.http)\r\n");
        if (try header(w, "connection: ", r.headers.connection)) try w.writeAll(if (r.keep_alive) "connection: keep-alive\r\n" else "connection: close\r\n");
        if (try header(w, "accept-encoding: ", r.headers.accept_encoding)) try w.writeAll("accept-encoding: gzip, deflate\r\n");
        try w.print("content-length: {d}\r\n", .{body.len});
        _ = try header(w, "content-type: ", r.headers.content_type);
        for (r.extra_headers) |h| try w.print("{s}: {s}\r\n", .{ h.name, h.value });
        try w.writeAll("\r\n");
        try w.writeAll(body);
        try w.flush();
        try t.socket_writer.interface.flush();
    }

    /// The socket, for the watchdog.
    pub fn socket(t: *const Tunnel) net.Socket.Handle {
        return t.stream.socket.handle;
    }

    /// What made a write fail: the socket's error.
    pub fn writeError(t: *const Tunnel) ?anyerror {
        return t.socket_writer.err;
    }

    /// What made a read fail: TLS (a bad record, a truncation) or the socket (a reset).
    pub fn readError(t: *const Tunnel) ?anyerror {
        if (t.tls.read_err) |e| return e;
        if (t.socket_reader.err) |e| return e;
        return null;
    }

    /// Whether the tunnel leads where `key` says.
    pub fn leadsTo(t: *const Tunnel, key: Key) bool {
        return t.key.eql(key);
    }

    /// Where it leads, for the connection log.
    pub fn peer(t: *const Tunnel) @import("connection_log.zig").Peer {
        return .{ .host = t.key.host, .port = t.key.port, .tunnel_proxy = .{ .host = t.key.proxy.host, .port = t.key.proxy.port } };
    }

    pub fn destroy(t: *Tunnel) void {
        t.stream.close(t.io);
        t.gpa.free(t.buffers);
        t.gpa.free(t.key_strings);
        t.gpa.destroy(t);
    }

    /// Reads the response head of a request sent through the tunnel, as std.http's
    /// `Request.receiveHead` does for one that does not follow redirects (and, as it does,
    /// marks the connection closing unless both sides keep it alive).
    pub fn receiveHead(t: *Tunnel, r: *Client.Request) Client.Request.ReceiveHeadError!Client.Response {
        while (true) {
            const bytes = r.reader.receiveHead() catch |err| {
                t.closing = true;
                return err;
            };
            const head = Client.Response.Head.parse(bytes) catch {
                t.closing = true;
                return error.HttpHeadersInvalid;
            };
            if (head.status == .@"continue" and r.handle_continue) continue;
            t.closing = !head.keep_alive or !r.keep_alive;
            if (!r.accept_encoding[@intFromEnum(head.content_encoding)]) return error.HttpContentEncodingUnsupported;
            r.response_transfer_encoding = head.transfer_encoding;
            r.response_content_length = head.content_length;
            return .{ .request = r, .head = head };
        }
    }
};

fn sendConnect(w: *Io.Writer, target: std.Uri, authorization: ?[]const u8) Io.Writer.Error!void {
    try w.print("CONNECT {f} HTTP/1.1\r\nhost: {f}\r\n", .{ fmtAuthority(&target), fmtAuthority(&target) });
    if (authorization) |value| try w.print("proxy-authorization: {s}\r\n", .{value});
    try w.writeAll("user-agent: panto/" ++ @import("../panto.zig").version ++ "\r\n\r\n");
    try w.flush();
}

fn fmtAuthority(target: *const std.Uri) std.fmt.Alt(std.Uri.Format, std.Uri.Format.default) {
    return target.fmt(.{ .authority = true });
}

/// Writes an overridden header; true when the default must be written.
fn header(w: *Io.Writer, prefix: []const u8, value: Client.Request.Headers.Value) Io.Writer.Error!bool {
    switch (value) {
        .default => return true,
        .omit => return false,
        .override => |v| {
            try w.print("{s}{s}\r\n", .{ prefix, v });
            return false;
        },
    }
}

fn errorName(err: ?anyerror) []const u8 {
    return if (err) |e| @errorName(e) else "closed";
}

/// A proxy's reason phrase, as shown in a message: printable ASCII, at most 80 characters.
fn printable(text: []const u8) Printable {
    return .{ .text = text[0..@min(text.len, 80)] };
}

const Printable = struct {
    text: []const u8,

    pub fn format(p: Printable, w: *Io.Writer) Io.Writer.Error!void {
        for (p.text) |ch| try w.writeByte(if (ch >= 0x20 and ch < 0x7f) ch else '?');
    }
};
