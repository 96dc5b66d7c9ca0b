#ifndef MOONMOCK_CJSONSKIM_H
#define MOONMOCK_CJSONSKIM_H

// One member of a JSON object read without building the document, for the GraphQL hot path
// (`operationName`). The whole document is checked against the grammar Moonmock's Swift JSON
// parser accepts (the same strings, escapes, numbers and nesting limit), so the answer is the
// one parsing it would give. In C because it runs on every GraphQL request and most of a body
// is string text, which SSE2 scans sixteen bytes at a time (Swift's SIMD types have no
// movemask to find the first hit with). Header-only (static inline, compiled into the Swift
// module that imports it, as CLua's json.h): built as a C target of its own, this code made
// valgrind 3.19 (scripts/bench-instructions) give up reading the binary's debug information,
// which CWatchdog's C target does not; why was not found. CLua's JSON decoder includes this
// header for mm_skim_stop, so that the scan of string text is written once.

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef struct {
    /// 0: no top-level member has the name; 1: it is a string, its bytes between the quotes at
    /// [start, end); 2: it is some other value. Of duplicate names the last counts.
    int found;
    size_t start, end;
    /// The string found has escapes (its bytes are not its text).
    int escaped;
    /// Some top-level key has escapes: it was not compared with the name.
    int escaped_key;
} mm_json_skim_result;

static inline int mm_skim_is_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static inline int mm_skim_is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/// The high bit of each byte of `w` that is a '"', a '\\' or a control byte (below 0x20): the
/// bytes that end a run of plain string text. A zero byte of w ^ '"' or w ^ '\\', or a byte
/// below 0x20, sets its high bit; a false hit can only sit above a true one (borrows), so the
/// lowest set bit is exact, and on a little-endian machine it is the first such byte.
static inline uint64_t mm_skim_word_stops(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t q = w ^ 0x2222222222222222ull, s = w ^ 0x5C5C5C5C5C5C5C5Cull;
    return (((q - ones) & ~q) | ((s - ones) & ~s) | ((w - 0x2020202020202020ull) & ~w)) & highs;
}

/// The first '"', '\\' or control character (below 0x20) at or after `i`; `n` when none. Sixteen
/// bytes at a time where SSE2 is (most of a GraphQL body is the query's text), then eight.
static inline __attribute__((always_inline)) size_t mm_skim_stop(const unsigned char *b, size_t i, size_t n) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), control = _mm_set1_epi8(0x1F);
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        // v <= 0x1F (unsigned) exactly when max(v, 0x1F) == 0x1F.
        __m128i hits = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                                    _mm_cmpeq_epi8(_mm_max_epu8(v, control), control));
        int mask = _mm_movemask_epi8(hits);
        if (mask) return i + (size_t)__builtin_ctz((unsigned)mask);
        i += 16;
    }
#endif
    while (n - i >= 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        uint64_t hits = mm_skim_word_stops(w);
        if (hits) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return i + (size_t)__builtin_ctzll(hits) / 8;
#else
            break;   // big-endian: the byte loop below finds it
#endif
        }
        i += 8;
    }
    while (i < n && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20) i++;
    return i;
}

/// Helpers take an index and return the index past what they read, or MM_SKIM_FAIL: no local
/// of the loop has its address taken, so all of them stay in registers.
#define MM_SKIM_FAIL ((size_t)-1)

/// Four hex digits at b[i] as a number in *out.
static inline size_t mm_skim_hex4(const unsigned char *b, size_t i, size_t n, unsigned *out) {
    if (n - i < 4) return MM_SKIM_FAIL;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char c = b[i + k];
        unsigned d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return MM_SKIM_FAIL;
        v = v << 4 | d;
    }
    *out = v;
    return i + 4;
}

/// The escape at b[i] (its backslash), as the parser takes it.
static inline size_t mm_skim_escape(const unsigned char *b, size_t i, size_t n) {
    if (n - i < 2) return MM_SKIM_FAIL;
    switch (b[i + 1]) {
    case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return i + 2;
    case 'u': {
        unsigned high, low;
        if ((i = mm_skim_hex4(b, i + 2, n, &high)) == MM_SKIM_FAIL) return MM_SKIM_FAIL;
        // A high surrogate followed by another \u escape must pair with a low one.
        if (high >= 0xD800 && high < 0xDC00 && n - i >= 2 && b[i] == '\\' && b[i + 1] == 'u') {
            if ((i = mm_skim_hex4(b, i + 2, n, &low)) == MM_SKIM_FAIL || low < 0xDC00 || low >= 0xE000) return MM_SKIM_FAIL;
        }
        return i;
    }
    default:
        return MM_SKIM_FAIL;
    }
}

/// The string at b[i] (its opening quote): the index past its closing quote; *escaped is set
/// when it has escapes.
static inline __attribute__((always_inline)) size_t mm_skim_string(const unsigned char *b, size_t i, size_t n, int *escaped) {
    i++;
    for (;;) {
        i = mm_skim_stop(b, i, n);
        if (i >= n) return MM_SKIM_FAIL;
        if (b[i] == '"') return i + 1;
        if (b[i] != '\\') return MM_SKIM_FAIL;   // a control character
        *escaped = 1;
        if ((i = mm_skim_escape(b, i, n)) == MM_SKIM_FAIL) return MM_SKIM_FAIL;
    }
}

/// Whether the number b[start..<end] is past a double's range (1e400, or 400 digits), as the
/// parser refuses it. Only asked of long numbers and long exponents, which are rare.
static inline int mm_skim_overflows(const unsigned char *b, size_t start, size_t end) {
    char small[64];
    size_t len = end - start;
    char *text = len < sizeof small ? small : (char *)malloc(len + 1);
    if (text == NULL) return 1;
    memcpy(text, b + start, len);
    text[len] = 0;
    int overflows = isinf(strtod(text, NULL));
    if (text != small) free(text);
    return overflows;
}

/// RFC 8259's number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, within a double's range.
static inline size_t mm_skim_number(const unsigned char *b, size_t i, size_t n) {
    size_t start = i, exponent_digits = 0;
    if (b[i] == '-') i++;
    if (i >= n || !mm_skim_is_digit(b[i])) return MM_SKIM_FAIL;
    if (b[i] == '0') i++; else while (i < n && mm_skim_is_digit(b[i])) i++;
    if (i < n && b[i] == '.') {
        i++;
        if (i >= n || !mm_skim_is_digit(b[i])) return MM_SKIM_FAIL;
        while (i < n && mm_skim_is_digit(b[i])) i++;
    }
    if (i < n && (b[i] == 'e' || b[i] == 'E')) {
        i++;
        if (i < n && (b[i] == '+' || b[i] == '-')) i++;
        if (i >= n || !mm_skim_is_digit(b[i])) return MM_SKIM_FAIL;
        size_t digits = i;
        while (i < n && mm_skim_is_digit(b[i])) i++;
        exponent_digits = i - digits;
    }
    // Fewer than 25 characters and an exponent under 100 cannot leave a double's range.
    if ((i - start > 24 || exponent_digits > 2) && mm_skim_overflows(b, start, i)) return MM_SKIM_FAIL;
    return i;
}

static inline size_t mm_skim_literal(const unsigned char *b, size_t i, size_t n, const char *word, size_t len) {
    return n - i < len || memcmp(b + i, word, len) != 0 ? MM_SKIM_FAIL : i + len;
}

/// Checks `b[0..<n]` and finds its top-level member `name`. Returns 1 when `b` is a valid JSON
/// object nested no deeper than `max_depth`, 0 otherwise (then `out` means nothing).
static inline int mm_json_skim(const unsigned char *b, size_t n, const unsigned char *name, size_t name_len,
                               int max_depth, mm_json_skim_result *out) {
    enum { VALUE, AFTER_VALUE, KEY } at = VALUE;
    // Whether each open container is an object, a bit per depth (depth 1 is bit 1).
    uint64_t objects[(4096 + 64) / 64];
    if (max_depth < 1 || max_depth > 4096) return 0;
    size_t i = 0, start = 0, end = 0;
    int depth = 0, named = 0, found = 0, escaped = 0, escaped_key = 0;
    while (i < n && mm_skim_is_space(b[i])) i++;
    if (i >= n || b[i] != '{') return 0;
    for (;;) {
        while (i < n && mm_skim_is_space(b[i])) i++;
        if (i >= n) break;
        unsigned char c = b[i];
        switch (at) {
        case VALUE: {
            int is_named = named;
            named = 0;
            at = AFTER_VALUE;
            if (is_named) found = 2;   // unless a string, below
            switch (c) {
            case '{': case '[': {
                int object = c == '{';
                if (++depth > max_depth) return 0;
                uint64_t bit = (uint64_t)1 << (depth & 63);
                if (object) objects[depth >> 6] |= bit; else objects[depth >> 6] &= ~bit;
                i++;
                while (i < n && mm_skim_is_space(b[i])) i++;
                if (i >= n) return 0;
                if (b[i] == (object ? '}' : ']')) { i++; depth--; }
                else at = object ? KEY : VALUE;
                continue;
            }
            case '"': {
                int e = 0;
                size_t past = mm_skim_string(b, i, n, &e);
                if (past == MM_SKIM_FAIL) return 0;
                if (is_named) { found = 1; start = i + 1; end = past - 1; escaped = e; }
                i = past;
                continue;
            }
            case 't': i = mm_skim_literal(b, i, n, "true", 4); break;
            case 'f': i = mm_skim_literal(b, i, n, "false", 5); break;
            case 'n': i = mm_skim_literal(b, i, n, "null", 4); break;
            case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
                i = mm_skim_number(b, i, n);
                break;
            default:
                return 0;
            }
            if (i == MM_SKIM_FAIL) return 0;
            continue;
        }
        case AFTER_VALUE: {
            if (depth == 0) return 0;   // bytes after the document
            int object = (int)(objects[depth >> 6] >> (depth & 63) & 1);
            if (c == ',') { i++; at = object ? KEY : VALUE; }
            else if (c == (object ? '}' : ']')) { i++; depth--; }
            else return 0;
            continue;
        }
        case KEY: {
            if (c != '"') return 0;
            int e = 0;
            size_t past = mm_skim_string(b, i, n, &e);
            if (past == MM_SKIM_FAIL) return 0;
            if (depth == 1) {
                escaped_key |= e;
                size_t len = past - 2 - i;
                named = !e && len == name_len && (len == 0 || memcmp(b + i + 1, name, len) == 0);
            }
            i = past;
            while (i < n && mm_skim_is_space(b[i])) i++;
            if (i >= n || b[i] != ':') return 0;
            i++;
            at = VALUE;
            continue;
        }
        }
    }
    if (depth != 0 || at != AFTER_VALUE) return 0;
    out->found = found;
    out->start = start;
    out->end = end;
    out->escaped = escaped;
    out->escaped_key = escaped_key;
    return 1;
}

#endif
