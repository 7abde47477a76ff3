//! AWS Signature Version 4 (docs/design/bedrock.md, "SigV4"): the `authorization` header of a
//! request signed with an access key, over the exact body bytes sent.
//!
//! The canonical request is hashed as it is made (no copy of the body or the request); the
//! headers signed are the caller's plus `host`, `x-amz-date` and, with temporary credentials,
//! `x-amz-security-token`. The path is given as sent (percent-encoded already) and encoded
//! once more for the canonical request, the rule of every AWS service but S3: a model id's
//! `:` is `%3A` on the wire and `%253A` in what is signed.
const std = @import("std");
const Sha256 = std.crypto.hash.sha2.Sha256;
const HmacSha256 = std.crypto.auth.hmac.sha2.HmacSha256;

pub const Credentials = struct {
    access_key_id: []const u8,
    secret_access_key: []const u8,
    /// Temporary credentials' session token, sent and signed as `x-amz-security-token`.
    session_token: ?[]const u8 = null,
};

pub const Header = struct { name: []const u8, value: []const u8 };

pub const Request = struct {
    method: []const u8 = "POST",
    host: []const u8,
    /// The path as sent, percent-encoded.
    path: []const u8,
    /// The canonical query string (names and values encoded, sorted), "" for none.
    query: []const u8 = "",
    /// Headers to sign besides host, x-amz-date and x-amz-security-token (lowercase names).
    headers: []const Header = &.{},
    body: []const u8,
};

pub const Scope = struct {
    region: []const u8,
    service: []const u8,
};

/// `x-amz-date`'s form: `YYYYMMDDTHHMMSSZ`, UTC.
pub const AmzDate = [16]u8;

pub fn amzDate(epoch_seconds: u64) AmzDate {
    const es: std.time.epoch.EpochSeconds = .{ .secs = epoch_seconds };
    const yd = es.getEpochDay().calculateYearDay();
    const md = yd.calculateMonthDay();
    const ds = es.getDaySeconds();
    var out: AmzDate = undefined;
    _ = std.fmt.bufPrint(&out, "{d:0>4}{d:0>2}{d:0>2}T{d:0>2}{d:0>2}{d:0>2}Z", .{
        yd.year, md.month.numeric(), @as(u8, md.day_index) + 1, ds.getHoursIntoDay(), ds.getMinutesIntoHour(), ds.getSecondsIntoMinute(),
    }) catch unreachable;
    return out;
}

/// The most headers signed (the caller's and the three added).
pub const max_headers = 16;

/// Writes the `authorization` header's value for `request`, made at `date`.
pub fn writeAuthorization(w: *std.Io.Writer, credentials: Credentials, scope: Scope, request: Request, date: AmzDate) (std.Io.Writer.Error || error{TooManyHeaders})!void {
    var headers: [max_headers]Header = undefined;
    const all = headers[0 .. request.headers.len + 2 + @intFromBool(credentials.session_token != null)];
    if (all.len > max_headers) return error.TooManyHeaders;
    @memcpy(all[0..request.headers.len], request.headers);
    all[request.headers.len] = .{ .name = "host", .value = request.host };
    all[request.headers.len + 1] = .{ .name = "x-amz-date", .value = &date };
    if (credentials.session_token) |token| all[all.len - 1] = .{ .name = "x-amz-security-token", .value = token };
    std.mem.sortUnstable(Header, all, {}, struct {
        fn lessThan(_: void, a: Header, b: Header) bool {
            return std.mem.lessThan(u8, a.name, b.name);
        }
    }.lessThan);

    // The canonical request, hashed as it is made.
    var creq = Sha256.init(.{});
    creq.update(request.method);
    creq.update("\n");
    updateEncodedPath(&creq, request.path);
    creq.update("\n");
    creq.update(request.query);
    creq.update("\n");
    for (all) |h| {
        creq.update(h.name);
        creq.update(":");
        updateTrimmedValue(&creq, h.value);
        creq.update("\n");
    }
    creq.update("\n");
    updateSignedHeaders(&creq, all);
    creq.update("\n");
    creq.update(&hexSha256(request.body));

    const day = date[0..8];
    var sts = HmacSha256.init(&signingKey(credentials.secret_access_key, day, scope));
    sts.update("AWS4-HMAC-SHA256\n");
    sts.update(&date);
    sts.update("\n");
    sts.update(day);
    sts.update("/");
    sts.update(scope.region);
    sts.update("/");
    sts.update(scope.service);
    sts.update("/aws4_request\n");
    sts.update(&std.fmt.bytesToHex(creq.finalResult(), .lower));
    var signature: [HmacSha256.mac_length]u8 = undefined;
    sts.final(&signature);

    try w.print("AWS4-HMAC-SHA256 Credential={s}/{s}/{s}/{s}/aws4_request, SignedHeaders=", .{ credentials.access_key_id, day, scope.region, scope.service });
    for (all, 0..) |h, i| {
        if (i > 0) try w.writeByte(';');
        try w.writeAll(h.name);
    }
    try w.print(", Signature={s}", .{&std.fmt.bytesToHex(signature, .lower)});
}

pub fn hexSha256(bytes: []const u8) [64]u8 {
    var digest: [Sha256.digest_length]u8 = undefined;
    Sha256.hash(bytes, &digest, .{});
    return std.fmt.bytesToHex(digest, .lower);
}

fn signingKey(secret: []const u8, day: []const u8, scope: Scope) [HmacSha256.mac_length]u8 {
    // The first key is "AWS4" ++ secret, made without an allocation: in a block's buffer,
    // or, longer than a block (never seen from AWS), hashed first, as HMAC does with a long key.
    var block: [Sha256.block_length]u8 = undefined;
    var hashed: [Sha256.digest_length]u8 = undefined;
    const first: []const u8 = if (secret.len + 4 <= block.len) blk: {
        @memcpy(block[0..4], "AWS4");
        @memcpy(block[4..][0..secret.len], secret);
        break :blk block[0 .. secret.len + 4];
    } else blk: {
        var h = Sha256.init(.{});
        h.update("AWS4");
        h.update(secret);
        h.final(&hashed);
        break :blk &hashed;
    };
    var key: [HmacSha256.mac_length]u8 = undefined;
    HmacSha256.create(&key, day, first);
    HmacSha256.create(&key, scope.region, &key);
    HmacSha256.create(&key, scope.service, &key);
    HmacSha256.create(&key, "aws4_request", &key);
    return key;
}

/// The path as sent, encoded once more: every byte but the unreserved ones and `/`.
fn updateEncodedPath(h: *Sha256, path: []const u8) void {
    if (path.len == 0) return h.update("/");
    for (path) |c| {
        if (std.ascii.isAlphanumeric(c) or c == '-' or c == '_' or c == '.' or c == '~' or c == '/') {
            h.update(&.{c});
        } else {
            const hex = std.fmt.bytesToHex([1]u8{c}, .upper);
            h.update(&.{ '%', hex[0], hex[1] });
        }
    }
}

/// A header value trimmed, its runs of spaces made one.
fn updateTrimmedValue(h: *Sha256, value: []const u8) void {
    var rest = std.mem.trim(u8, value, " \t");
    while (std.mem.indexOfAny(u8, rest, " \t")) |gap| {
        h.update(rest[0..gap]);
        h.update(" ");
        rest = std.mem.trimStart(u8, rest[gap..], " \t");
    }
    h.update(rest);
}

fn updateSignedHeaders(h: *Sha256, headers: []const Header) void {
    for (headers, 0..) |header, i| {
        if (i > 0) h.update(";");
        h.update(header.name);
    }
}
