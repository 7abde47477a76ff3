/*
 * c_json.h — the little JSON reading the C conformance driver needs (C99, header-only).
 *
 * It works in place on a NUL-terminated JSON text: cj_skip() validates one value and returns
 * the position after it, cj_member() finds a key of an object, cj_string() decodes a string
 * (escapes, \uXXXX and surrogate pairs to UTF-8). Nothing is allocated except the decoded
 * strings. The grammar is RFC 8259; nesting is limited to CJ_MAX_DEPTH.
 *
 * Writing JSON (the transcript) is in c_driver.c.
 */
#ifndef C_JSON_H
#define C_JSON_H

#include <stdlib.h>
#include <string.h>

#define CJ_MAX_DEPTH 64

static const char *cj_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static int cj_hex4(const char *p, unsigned long *out) {
    unsigned long v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned long)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* Appends the UTF-8 encoding of code point cp to dst (which has room for 4 bytes). */
static size_t cj_put_utf8(char *dst, unsigned long cp) {
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads the string starting at p (which must point at '"'). Returns the position after the
 * closing quote, or NULL if the string is malformed (bad escape, lone surrogate, raw control
 * character, unterminated). When out is not NULL, *out receives the decoded text (malloc'd,
 * NUL-terminated; it may hold NUL bytes, see *out_len). */
static const char *cj_string(const char *p, char **out, size_t *out_len) {
    const char *q;
    char *buf = NULL;
    size_t n = 0;

    if (*p != '"') return NULL;
    /* The decoded text is never longer than the source text. */
    if (out) {
        size_t cap = 1;
        for (q = p + 1; *q && *q != '"'; q++) {
            cap++;
            if (*q == '\\' && q[1]) {
                q++;
                cap++;
            }
        }
        buf = (char *)malloc(cap + 1);
        if (!buf) return NULL;
    }
    for (q = p + 1;;) {
        unsigned char c = (unsigned char)*q;
        if (c == '"') break;
        if (c == 0 || c < 0x20) goto fail;
        if (c != '\\') {
            if (buf) buf[n] = (char)c;
            n++;
            q++;
            continue;
        }
        q++;
        switch (*q) {
        case '"': c = '"'; break;
        case '\\': c = '\\'; break;
        case '/': c = '/'; break;
        case 'b': c = '\b'; break;
        case 'f': c = '\f'; break;
        case 'n': c = '\n'; break;
        case 'r': c = '\r'; break;
        case 't': c = '\t'; break;
        case 'u': {
            unsigned long cp, lo;
            char tmp[4];
            size_t k;
            if (cj_hex4(q + 1, &cp) < 0) goto fail;
            q += 5;
            if (cp >= 0xDC00 && cp <= 0xDFFF) goto fail; /* lone low surrogate */
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (q[0] != '\\' || q[1] != 'u' || cj_hex4(q + 2, &lo) < 0) goto fail;
                if (lo < 0xDC00 || lo > 0xDFFF) goto fail;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                q += 6;
            }
            k = cj_put_utf8(tmp, cp);
            if (buf) memcpy(buf + n, tmp, k);
            n += k;
            continue;
        }
        default: goto fail;
        }
        if (buf) buf[n] = (char)c;
        n++;
        q++;
    }
    if (buf) {
        buf[n] = 0;
        *out = buf;
    }
    if (out_len) *out_len = n;
    return q + 1;
fail:
    free(buf);
    return NULL;
}

static const char *cj_digits(const char *p) {
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

static const char *cj_number(const char *p) {
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (!(p = cj_digits(p))) return NULL;
    if (*p == '.' && !(p = cj_digits(p + 1))) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(p = cj_digits(p))) return NULL;
    }
    return p;
}

static const char *cj_skip_depth(const char *p, int depth) {
    if (depth > CJ_MAX_DEPTH) return NULL;
    p = cj_ws(p);
    switch (*p) {
    case '"': return cj_string(p, NULL, NULL);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    case '[':
        p = cj_ws(p + 1);
        if (*p == ']') return p + 1;
        for (;;) {
            if (!(p = cj_skip_depth(p, depth + 1))) return NULL;
            p = cj_ws(p);
            if (*p == ']') return p + 1;
            if (*p != ',') return NULL;
            p++;
        }
    case '{':
        p = cj_ws(p + 1);
        if (*p == '}') return p + 1;
        for (;;) {
            if (!(p = cj_string(cj_ws(p), NULL, NULL))) return NULL;
            p = cj_ws(p);
            if (*p != ':') return NULL;
            if (!(p = cj_skip_depth(p + 1, depth + 1))) return NULL;
            p = cj_ws(p);
            if (*p == '}') return p + 1;
            if (*p != ',') return NULL;
            p = cj_ws(p + 1);
        }
    default: return cj_number(p);
    }
}

/* Validates the value at p (after optional whitespace); returns the position after it or NULL. */
static const char *cj_skip(const char *p) { return cj_skip_depth(p, 0); }

/* The value of member `key` in the (already validated) object at obj, or NULL if absent. */
static const char *cj_member(const char *obj, const char *key) {
    const char *p = cj_ws(obj);
    if (*p != '{') return NULL;
    p = cj_ws(p + 1);
    while (*p == '"') {
        char *name = NULL;
        size_t len = 0;
        int match;
        if (!(p = cj_string(p, &name, &len))) return NULL;
        match = len == strlen(key) && memcmp(name, key, len) == 0;
        free(name);
        p = cj_ws(cj_ws(p) + 1); /* past ':' */
        if (match) return p;
        if (!(p = cj_skip(p))) return NULL;
        p = cj_ws(p);
        if (*p != ',') return NULL;
        p = cj_ws(p + 1);
    }
    return NULL;
}

#endif /* C_JSON_H */
