/*
 * c_json.h — the little JSON reading the C conformance driver needs (C99, header-only).
 *
 * Reading works in place on a NUL-terminated JSON text: cj_skip() validates one value and
 * returns the position after it, cj_member() finds a key of an object, cj_next_member() and
 * cj_next_element() walk an object or an array, cj_string() decodes a string (escapes,
 * \uXXXX and surrogate pairs to UTF-8). Nothing is allocated except the decoded strings. The
 * grammar is RFC 8259; nesting is limited to CJ_MAX_DEPTH. Functions are `static inline` so that
 * a program may use any subset of them without unused-function warnings.
 *
 * Writing goes to a growable buffer (CjBuf): raw bytes, a JSON string, or a value in the
 * canonical form of the conformance cases (cj_put_canonical: compact, keys sorted).
 * Writing the transcript lines is in c_driver.c.
 */
#ifndef C_JSON_H
#define C_JSON_H

#include <stdlib.h>
#include <string.h>

#define CJ_MAX_DEPTH 64

static inline const char *cj_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    return p;
}

static inline int cj_hex4(const char *p, unsigned long *out) {
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
static inline size_t cj_put_utf8(char *dst, unsigned long cp) {
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
static inline const char *cj_string(const char *p, char **out, size_t *out_len) {
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

static inline const char *cj_digits(const char *p) {
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

static inline const char *cj_number(const char *p) {
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

static inline const char *cj_skip_depth(const char *p, int depth) {
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
static inline const char *cj_skip(const char *p) { return cj_skip_depth(p, 0); }

/* The value of member `key` in the (already validated) object at obj, or NULL if absent. */
static inline const char *cj_member(const char *obj, const char *key) {
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

/* Walks the members of an (already validated) object. Start with it = the object itself;
 * each call returns the new iterator (the end of the member's value), sets *key (malloc'd,
 * NUL-terminated, free it) / *key_len and *value (the member's value), or returns NULL after
 * the last member:
 *
 *     const char *it = obj, *value; char *key; size_t key_len;
 *     while ((it = cj_next_member(it, &key, &key_len, &value))) { ...; free(key); }
 */
static inline const char *cj_next_member(const char *it, char **key, size_t *key_len, const char **value) {
    const char *p = cj_ws(it);
    if (*p != '{' && *p != ',') return NULL;
    p = cj_ws(p + 1);
    if (*p != '"') return NULL;
    if (!(p = cj_string(p, key, key_len))) return NULL;
    p = cj_ws(p);
    if (*p != ':') {
        free(*key);
        return NULL;
    }
    *value = cj_ws(p + 1);
    if (!(p = cj_skip(*value))) {
        free(*key);
        return NULL;
    }
    return p;
}

/* Walks the elements of an (already validated) array, like cj_next_member. */
static inline const char *cj_next_element(const char *it, const char **value) {
    const char *p = cj_ws(it);
    if (*p != '[' && *p != ',') return NULL;
    p = cj_ws(p + 1);
    if (*p == ']') return NULL;
    *value = p;
    return cj_skip(p);
}

/* ---- Writing ------------------------------------------------------------------------- */

/* A growable byte buffer; `failed` is set (and the text dropped) when memory runs out. */
typedef struct CjBuf {
    char *ptr;
    size_t len, cap;
    int failed;
} CjBuf;

#define CJ_BUF_INIT {NULL, 0, 0, 0}

static inline void cj_put(CjBuf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 64;
        char *grown;
        while (cap - b->len < n + 1) cap *= 2;
        if (!(grown = (char *)realloc(b->ptr, cap))) {
            free(b->ptr);
            b->ptr = NULL;
            b->len = b->cap = 0;
            b->failed = 1;
            return;
        }
        b->ptr = grown;
        b->cap = cap;
    }
    memcpy(b->ptr + b->len, s, n);
    b->len += n;
    b->ptr[b->len] = 0; /* always NUL-terminated */
}

static inline void cj_puts(CjBuf *b, const char *s) { cj_put(b, s, strlen(s)); }

/* Writes s as a JSON string, escaping only what must be: `"`, `\`, \b \f \n \r \t, other
 * control characters as \u00xx (lower-case hex); all else, UTF-8 included, as is. */
static inline void cj_put_string(CjBuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;
    cj_put(b, "\"", 1);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[7];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        cj_put(b, s + run, i - run);
        run = i + 1;
        esc[0] = '\\';
        esc[2] = 0;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            esc[6] = 0;
        }
        cj_puts(b, esc);
    }
    cj_put(b, s + run, n - run);
    cj_put(b, "\"", 1);
}

typedef struct CjMember {
    char *key;
    size_t key_len;
    const char *value;
} CjMember;

/* Orders keys by their UTF-8 bytes, which is Unicode code point order. */
static inline int cj_member_cmp(const void *a, const void *b) {
    const CjMember *x = (const CjMember *)a, *y = (const CjMember *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    return x->key_len < y->key_len ? -1 : x->key_len > y->key_len;
}

/* Writes the (already validated) value at p in canonical form: no whitespace, object keys
 * sorted by code point, strings as cj_put_string writes them, numbers, true, false and null
 * as they are written in the source. Returns the position after the value, or NULL (and sets
 * b->failed) if the value is malformed or memory ran out. */
static inline const char *cj_put_canonical(CjBuf *b, const char *p) {
    const char *end;
    p = cj_ws(p);
    if (!(end = cj_skip(p))) {
        b->failed = 1;
        return NULL;
    }
    if (*p == '"') {
        char *s;
        size_t n;
        if (!cj_string(p, &s, &n)) {
            b->failed = 1;
            return NULL;
        }
        cj_put_string(b, s, n);
        free(s);
    } else if (*p == '[') {
        const char *it = p, *value;
        int first = 1;
        cj_put(b, "[", 1);
        while ((it = cj_next_element(it, &value))) {
            if (!first) cj_put(b, ",", 1);
            first = 0;
            cj_put_canonical(b, value);
        }
        cj_put(b, "]", 1);
    } else if (*p == '{') {
        CjMember *members = NULL, *grown;
        size_t n = 0, cap = 0, i;
        const char *it = p, *value;
        char *key;
        size_t key_len;
        while ((it = cj_next_member(it, &key, &key_len, &value))) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                if (!(grown = (CjMember *)realloc(members, cap * sizeof *members))) {
                    free(key);
                    b->failed = 1;
                    break;
                }
                members = grown;
            }
            members[n].key = key;
            members[n].key_len = key_len;
            members[n].value = value;
            n++;
        }
        if (n) qsort(members, n, sizeof *members, cj_member_cmp);
        cj_put(b, "{", 1);
        for (i = 0; i < n; i++) {
            if (i) cj_put(b, ",", 1);
            cj_put_string(b, members[i].key, members[i].key_len);
            cj_put(b, ":", 1);
            cj_put_canonical(b, members[i].value);
            free(members[i].key);
        }
        cj_put(b, "}", 1);
        free(members);
    } else {
        cj_put(b, p, (size_t)(end - p));
    }
    return b->failed ? NULL : end;
}

#endif /* C_JSON_H */
