//! What the environment says about reaching the provider, applied to an agent's HTTP client
//! before each request: proxies (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY and NO_PROXY, upper or
//! lower case) and the trusted certificates (SSL_CERT_FILE replaces the system store, as in
//! OpenSSL). The environment is read at each request, so a program may change it between turns.
const std = @import("std");
const Allocator = std.mem.Allocator;
const Client = std.http.Client;

pub const Settings = struct {
    /// Holds the proxies built so far; a proxy is rebuilt only when its variable changes.
    arena: std.heap.ArenaAllocator,
    https: Cached = .{},
    http: Cached = .{},
    /// The CA bundle came from SSL_CERT_FILE (and from which file).
    ca_file: ?[]const u8 = null,

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

    pub const Error = error{ BadProxy, BadCaFile, TunnelUnsupported, OutOfMemory };

    /// Sets the client's proxies (or none, for a NO_PROXY host) and trust for a request to
    /// `uri`. `problem` gets a message on error.
    pub fn apply(s: *Settings, client: *Client, uri: std.Uri, problem: *[160]u8) Error![]const u8 {
        var host_buf: [std.Io.net.HostName.max_len]u8 = undefined;
        const host = (uri.getHost(&host_buf) catch return error.BadProxy).bytes;
        const port: u16 = uri.port orelse if (std.mem.eql(u8, uri.scheme, "https")) 443 else 80;
        const bypass = noProxy(env("NO_PROXY", "no_proxy"), host, port);
        client.https_proxy = if (bypass) null else try s.proxy(&s.https, env("HTTPS_PROXY", "https_proxy") orelse env("ALL_PROXY", "all_proxy"), true);
        client.http_proxy = if (bypass) null else try s.proxy(&s.http, env("HTTP_PROXY", "http_proxy") orelse env("ALL_PROXY", "all_proxy"), false);
        if (std.mem.eql(u8, uri.scheme, "https")) {
            // std.http 0.16 opens the CONNECT tunnel but then speaks plain HTTP inside it: the
            // request, API key included, would cross the proxy unencrypted. Refuse instead.
            if (client.https_proxy != null) {
                _ = std.fmt.bufPrint(problem, "HTTPS through a proxy is not supported yet (the tunnel would carry the request unencrypted); set NO_PROXY={s} to go direct", .{host}) catch {};
                return error.TunnelUnsupported;
            }
            try s.trust(client, problem);
        }
        return "";
    }

    fn proxy(s: *Settings, cache: *Cached, value: ?[]const u8, tunnel_plain: bool) Error!?*Client.Proxy {
        const v = value orelse return null;
        if (v.len == 0) return null;
        if (cache.proxy != null and std.mem.eql(u8, cache.value, v)) return cache.proxy;
        const a = s.arena.allocator();
        const uri = std.Uri.parse(v) catch std.Uri.parseAfterScheme("http", v) catch return error.BadProxy;
        const protocol: Client.Protocol = if (std.mem.eql(u8, uri.scheme, "https")) .tls else .plain;
        const p = try a.create(Client.Proxy);
        p.* = .{
            .protocol = protocol,
            .host = uri.getHostAlloc(a) catch return error.BadProxy,
            .authorization = if (uri.user != null or uri.password != null) blk: {
                const buf = try a.alloc(u8, Client.basic_authorization.valueLengthFromUri(uri));
                break :blk Client.basic_authorization.value(uri, buf);
            } else null,
            .port = uri.port orelse if (protocol == .tls) 443 else 80,
            // HTTPS goes through a CONNECT tunnel; plain HTTP is forwarded by the proxy as
            // absolute-URI requests, as HTTP proxies expect.
            .supports_connect = tunnel_plain,
        };
        cache.value = try a.dupe(u8, v);
        cache.proxy = p;
        return p;
    }

    /// Loads SSL_CERT_FILE into the client's CA bundle; without it, std.http scans the
    /// system's store on the first HTTPS request.
    fn trust(s: *Settings, client: *Client, problem: *[160]u8) Error!void {
        const path = env("SSL_CERT_FILE", null) orelse return;
        if (s.ca_file) |loaded| if (std.mem.eql(u8, loaded, path)) return;
        const gpa = client.allocator;
        var abs_buf: [std.c.PATH_MAX]u8 = undefined;
        const path_z = std.fmt.allocPrintSentinel(gpa, "{s}", .{path}, 0) catch return error.OutOfMemory;
        defer gpa.free(path_z);
        const abs = std.c.realpath(path_z, &abs_buf) orelse {
            _ = std.fmt.bufPrint(problem, "SSL_CERT_FILE \"{s}\" cannot be read", .{path}) catch {};
            return error.BadCaFile;
        };
        const now = std.Io.Clock.real.now(client.io);
        var bundle: std.crypto.Certificate.Bundle = .empty;
        bundle.addCertsFromFilePathAbsolute(gpa, client.io, now, std.mem.span(abs)) catch |err| {
            bundle.deinit(gpa);
            _ = std.fmt.bufPrint(problem, "SSL_CERT_FILE \"{s}\": {s}", .{ path, @errorName(err) }) catch {};
            return error.BadCaFile;
        };
        client.ca_bundle.deinit(gpa);
        client.ca_bundle = bundle;
        client.now = now; // tells std.http not to rescan the system store
        s.ca_file = try s.arena.allocator().dupe(u8, path);
    }
};

fn env(upper: [:0]const u8, lower: ?[:0]const u8) ?[]const u8 {
    if (std.c.getenv(upper)) |v| return std.mem.span(v);
    if (lower) |l| if (std.c.getenv(l)) |v| return std.mem.span(v);
    return null;
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
