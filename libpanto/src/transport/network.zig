//! What the environment says about reaching the provider, applied to an agent's HTTP client
//! before each request: proxies (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY, upper or
//! lower case) and the trusted certificates (SSL_CERT_FILE replaces the system store, as in
//! OpenSSL). The environment is read at each request, so a program may change it between turns.
//!
//! Plain http:// requests go through an HTTP proxy the std.http way (absolute-form requests).
//! https:// requests through a proxy take panto's own CONNECT tunnel (tunnel.zig): std.http
//! never tunnels, since its tunnel would carry the request unencrypted.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Client = std.http.Client;
const tunnel = @import("tunnel.zig");
const hasControl = @import("../config.zig").hasControl;

/// Where a request goes.
pub const Route = union(enum) {
    /// std.http connects: directly, or to the HTTP proxy it was given (http:// only).
    std_http,
    /// Through panto's CONNECT tunnel to this proxy (https:// only).
    tunnel: tunnel.Proxy,
};

pub const Settings = struct {
    /// Holds the proxies built so far; a proxy is rebuilt only when its variable changes.
    arena: std.heap.ArenaAllocator,
    https: Cached = .{},
    http: Cached = .{},
    /// The CA bundle came from SSL_CERT_FILE (and from which file).
    ca_file: ?[]const u8 = null,
    /// Reads a variable of the environment (tests give their own).
    getenv: *const fn (name: [:0]const u8) ?[]const u8 = processEnv,

    const Cached = struct {
        value: []const u8 = "",
        proxy: ?*Client.Proxy = null,
    };

    pub fn init(gpa: Allocator) Settings {
        return .{ .arena = .init(gpa) };
    }

    pub fn deinit(s: *Settings) void {
        s.arena.deinit();
    }

    pub const Error = error{ BadProxy, BadCaFile, OutOfMemory };

    /// Sets the client's proxy (or none, for a NO_PROXY host) and trust for a request to
    /// `uri`, and says which way it goes. `problem` gets a message on error.
    pub fn apply(s: *Settings, client: *Client, uri: std.Uri, problem: *[256]u8) Error!Route {
        var host_buf: [std.Io.net.HostName.max_len]u8 = undefined;
        const host = (uri.getHost(&host_buf) catch {
            _ = std.fmt.bufPrint(problem, "the base_url has no host", .{}) catch {};
            return error.BadProxy;
        }).bytes;
        const https = std.mem.eql(u8, uri.scheme, "https");
        const port: u16 = uri.port orelse if (https) 443 else 80;
        const bypass = noProxy(s.env("NO_PROXY", "no_proxy"), host, port);
        // std.http must never open a CONNECT tunnel itself (see the top of this file).
        client.https_proxy = null;
        client.http_proxy = if (bypass or https) null else try s.proxy(&s.http, s.env("HTTP_PROXY", "http_proxy") orelse s.env("ALL_PROXY", "all_proxy"), problem);
        if (!https) return .std_http;
        try s.trust(client, problem);
        if (bypass) return .std_http;
        const p = try s.proxy(&s.https, s.env("HTTPS_PROXY", "https_proxy") orelse s.env("ALL_PROXY", "all_proxy"), problem) orelse return .std_http;
        if (p.protocol == .tls) {
            _ = std.fmt.bufPrint(problem, "the HTTPS proxy {s}:{d} is an https:// URL: TLS to the proxy itself is not supported, use http://", .{ p.host.bytes, p.port }) catch {};
            return error.BadProxy;
        }
        return .{ .tunnel = .{ .host = p.host.bytes, .port = p.port, .authorization = p.authorization } };
    }

    fn proxy(s: *Settings, cache: *Cached, value: ?[]const u8, problem: *[256]u8) Error!?*Client.Proxy {
        const v = value orelse return null;
        if (v.len == 0) return null;
        if (cache.proxy != null and std.mem.eql(u8, cache.value, v)) return cache.proxy;
        // The value may hold credentials: messages never quote it.
        if (hasControl(v)) {
            _ = std.fmt.bufPrint(problem, "a proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) contains a control character", .{}) catch {};
            return error.BadProxy;
        }
        const a = s.arena.allocator();
        // Without a scheme ("proxy.corp:3128"), http:// is meant, as curl reads it.
        const url = if (std.mem.indexOf(u8, v, "://") == null) try std.fmt.allocPrint(a, "http://{s}", .{v}) else v;
        const uri = std.Uri.parse(url) catch {
            _ = std.fmt.bufPrint(problem, "a proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) is not a URL", .{}) catch {};
            return error.BadProxy;
        };
        const protocol: Client.Protocol = Client.Protocol.fromScheme(uri.scheme) orelse {
            _ = std.fmt.bufPrint(problem, "a proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) has the scheme \"{s}\": only http:// proxies are supported", .{uri.scheme[0..@min(uri.scheme.len, 16)]}) catch {};
            return error.BadProxy;
        };
        const p = try a.create(Client.Proxy);
        p.* = .{
            .protocol = protocol,
            .host = uri.getHostAlloc(a) catch |err| switch (err) {
                error.OutOfMemory => return error.OutOfMemory,
                error.UriMissingHost => {
                    _ = std.fmt.bufPrint(problem, "a proxy variable (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY) has no host", .{}) catch {};
                    return error.BadProxy;
                },
            },
            .authorization = try basicAuthorization(a, uri),
            .port = uri.port orelse if (protocol == .tls) 443 else 80,
            // Plain HTTP is forwarded by the proxy as absolute-URI requests, as HTTP proxies
            // expect; std.http tunnels nothing.
            .supports_connect = false,
        };
        cache.value = try a.dupe(u8, v);
        cache.proxy = p;
        return p;
    }

    /// Loads SSL_CERT_FILE into the client's CA bundle, or else the system's store (once, as
    /// std.http would before its first HTTPS request; the tunnel needs it loaded too).
    fn trust(s: *Settings, client: *Client, problem: *[256]u8) Error!void {
        const gpa = client.allocator;
        const now = std.Io.Clock.real.now(client.io);
        const path = s.env("SSL_CERT_FILE", null) orelse {
            if (client.now != null and s.ca_file == null) return;
            var bundle: std.crypto.Certificate.Bundle = .empty;
            bundle.rescan(gpa, client.io, now) catch |err| {
                bundle.deinit(gpa);
                _ = std.fmt.bufPrint(problem, "the system's CA certificates cannot be loaded: {s}", .{@errorName(err)}) catch {};
                return error.BadCaFile;
            };
            s.use(client, bundle, now, null);
            return;
        };
        if (s.ca_file) |loaded| if (std.mem.eql(u8, loaded, path)) return;
        var abs_buf: [std.c.PATH_MAX]u8 = undefined;
        const path_z = std.fmt.allocPrintSentinel(gpa, "{s}", .{path}, 0) catch return error.OutOfMemory;
        defer gpa.free(path_z);
        const abs = std.c.realpath(path_z, &abs_buf) orelse {
            _ = std.fmt.bufPrint(problem, "SSL_CERT_FILE \"{s}\" cannot be read", .{path}) catch {};
            return error.BadCaFile;
        };
        var bundle: std.crypto.Certificate.Bundle = .empty;
        bundle.addCertsFromFilePathAbsolute(gpa, client.io, now, std.mem.span(abs)) catch |err| {
            bundle.deinit(gpa);
            _ = std.fmt.bufPrint(problem, "SSL_CERT_FILE \"{s}\": {s}", .{ path, @errorName(err) }) catch {};
            return error.BadCaFile;
        };
        s.use(client, bundle, now, try s.arena.allocator().dupe(u8, path));
    }

    /// The resolv.conf to read instead of /etc/resolv.conf (resolve.zig), if any.
    pub fn resolvConf(s: *const Settings) ?[]const u8 {
        return s.env("PANTO_RESOLV_CONF", null);
    }

    /// The upper-case variable, else the lower-case one; an empty value counts as unset.
    fn env(s: *const Settings, upper: [:0]const u8, lower: ?[:0]const u8) ?[]const u8 {
        if (s.getenv(upper)) |v| if (v.len > 0) return v;
        if (lower) |l| if (s.getenv(l)) |v| if (v.len > 0) return v;
        return null;
    }

    fn use(s: *Settings, client: *Client, bundle: std.crypto.Certificate.Bundle, now: std.Io.Timestamp, ca_file: ?[]const u8) void {
        client.ca_bundle.deinit(client.allocator);
        client.ca_bundle = bundle;
        client.now = now; // tells std.http not to rescan the system store
        s.ca_file = ca_file;
    }
};

/// The Proxy-Authorization value of a proxy URL's user:password ("Basic " and base64), the
/// percent-encoded characters decoded first (as curl does: "p%40ss" is the password "p@ss");
/// null without credentials.
pub fn basicAuthorization(a: Allocator, uri: std.Uri) Allocator.Error!?[]const u8 {
    if (uri.user == null and uri.password == null) return null;
    var plain: std.Io.Writer.Allocating = .init(a);
    defer plain.deinit();
    const w = &plain.writer;
    (uri.user orelse std.Uri.Component.empty).formatRaw(w) catch return error.OutOfMemory;
    w.writeByte(':') catch return error.OutOfMemory;
    (uri.password orelse std.Uri.Component.empty).formatRaw(w) catch return error.OutOfMemory;
    const raw = plain.written();
    const encoder = std.base64.standard.Encoder;
    const out = try a.alloc(u8, "Basic ".len + encoder.calcSize(raw.len));
    @memcpy(out[0.."Basic ".len], "Basic ");
    _ = encoder.encode(out["Basic ".len..], raw);
    return out;
}

fn processEnv(name: [:0]const u8) ?[]const u8 {
    return if (std.c.getenv(name)) |v| std.mem.span(v) else null;
}

/// NO_PROXY: comma-separated host names, domain suffixes (".example.com" or "example.com"
/// both match sub.example.com), optional ":port", or "*" for every host.
pub fn noProxy(list: ?[]const u8, host: []const u8, port: u16) bool {
    const entries = list orelse return false;
    var it = std.mem.tokenizeAny(u8, entries, ", ");
    while (it.next()) |raw| {
        if (std.mem.eql(u8, raw, "*")) return true;
        var entry = raw;
        if (std.mem.lastIndexOfScalar(u8, entry, ':')) |colon| {
            if (std.mem.indexOfScalar(u8, entry, ']') == null or colon > std.mem.indexOfScalar(u8, entry, ']').?) {
                const p = std.fmt.parseInt(u16, entry[colon + 1 ..], 10) catch continue;
                if (p != port) continue;
                entry = entry[0..colon];
            }
        }
        entry = std.mem.trimStart(u8, entry, ".");
        if (std.ascii.eqlIgnoreCase(entry, host)) return true;
        if (host.len > entry.len and host[host.len - entry.len - 1] == '.' and std.ascii.eqlIgnoreCase(host[host.len - entry.len ..], entry)) return true;
    }
    return false;
}

test "proxy credentials are percent-decoded before they are encoded" {
    var arena: std.heap.ArenaAllocator = .init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    // "pan to" and "p@ss:w%rd", base64: cGFuIHRvOnBAc3M6dyVyZA==
    const auth = try basicAuthorization(a, try std.Uri.parse("http://pan%20to:p%40ss%3Aw%25rd@127.0.0.1:3128"));
    try std.testing.expectEqualStrings("Basic cGFuIHRvOnBAc3M6dyVyZA==", auth.?);
    try std.testing.expectEqualStrings("Basic cGFudG86czNjcmV0", (try basicAuthorization(a, try std.Uri.parse("http://panto:s3cret@proxy:8080"))).?);
    try std.testing.expectEqualStrings("Basic dXNlcjo=", (try basicAuthorization(a, try std.Uri.parse("http://user@proxy"))).?);
    try std.testing.expect((try basicAuthorization(a, try std.Uri.parse("http://proxy:8080"))) == null);
}

test "proxy URLs: with or without a scheme, and the schemes refused" {
    var s: Settings = .init(std.testing.allocator);
    defer s.deinit();
    var problem: [256]u8 = @splat(0);
    var cache: Settings.Cached = .{};
    const p = (try s.proxy(&cache, "proxy.corp:3128", &problem)).?;
    try std.testing.expectEqualStrings("proxy.corp", p.host.bytes);
    try std.testing.expectEqual(@as(u16, 3128), p.port);
    try std.testing.expectEqual(Client.Protocol.plain, p.protocol);
    try std.testing.expect(p.authorization == null);
    const q = (try s.proxy(&cache, "http://u:p@10.0.0.1", &problem)).?;
    try std.testing.expectEqual(@as(u16, 80), q.port);
    try std.testing.expectEqualStrings("Basic dTpw", q.authorization.?);
    try std.testing.expectEqual(Client.Protocol.tls, (try s.proxy(&cache, "https://proxy.corp", &problem)).?.protocol);
    try std.testing.expectError(error.BadProxy, s.proxy(&cache, "socks5://proxy.corp:1080", &problem));
    try std.testing.expect(std.mem.indexOf(u8, &problem, "\"socks5\": only http://") != null);
    try std.testing.expect((try s.proxy(&cache, "", &problem)) == null);
}

test "a proxy variable with a control character is refused, unquoted" {
    var s: Settings = .init(std.testing.allocator);
    defer s.deinit();
    var cache: Settings.Cached = .{};
    for ([_][]const u8{ "http://u:s3cret@proxy:3128\r\nX-Injected: yes", "http://proxy:3128/\x00", "proxy\t:3128" }) |value| {
        var problem: [256]u8 = @splat(0);
        try std.testing.expectError(error.BadProxy, s.proxy(&cache, value, &problem));
        const message = std.mem.sliceTo(&problem, 0);
        try std.testing.expect(std.mem.indexOf(u8, message, "contains a control character") != null);
        try std.testing.expect(std.mem.indexOf(u8, message, "s3cret") == null);
        try std.testing.expect(std.mem.indexOf(u8, message, "proxy:") == null);
    }
}

test "NO_PROXY matching" {
    try std.testing.expect(noProxy("localhost,127.0.0.1", "localhost", 80));
    try std.testing.expect(noProxy("example.com", "api.example.com", 443));
    try std.testing.expect(noProxy(".example.com", "api.example.com", 443));
    try std.testing.expect(!noProxy("example.com", "badexample.com", 443));
    try std.testing.expect(noProxy("*", "anything", 1));
    try std.testing.expect(noProxy("localhost:8080", "localhost", 8080));
    try std.testing.expect(!noProxy("localhost:8080", "localhost", 9090));
    try std.testing.expect(!noProxy(null, "localhost", 80));
    try std.testing.expect(!noProxy("", "localhost", 80));
}
