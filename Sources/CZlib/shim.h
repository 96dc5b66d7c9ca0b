#ifndef MOONMOCK_CZLIB_SHIM_H
#define MOONMOCK_CZLIB_SHIM_H

// zlib's inflate for the content codings every URLSession decodes (gzip, deflate), so that the
// in-process door hands a task the body the socket door does. zlib is in every SDK (iOS's
// included) and Debian's zlib1g-dev; Brotli and zstd live in CCompression, on Linux only.
// Each decoder takes a whole body held in memory into a growing buffer, in C because zlib's
// stream API is a C struct driven in a loop. A body that ends before its stream does gives
// what decoded up to there (as libcurl and CFNetwork give it); bytes that break the format fail.

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MM_DECODE_OK 0
/// The bytes are not valid for the coding.
#define MM_DECODE_BAD 1
/// The decoded body would pass the limit the caller gave.
#define MM_DECODE_TOO_LARGE 2
#define MM_DECODE_NOMEM 3

/// A growing output buffer; the caller frees `data` with mm_decoded_free.
typedef struct mm_decoded {
    unsigned char *data;
    size_t len;
    size_t cap;
} mm_decoded;

static inline void mm_decoded_free(mm_decoded *out) {
    free(out->data);
    out->data = NULL;
    out->len = out->cap = 0;
}

/// Room for at least one more byte (the buffer doubles, from 4 KiB or the input's size).
static inline int mm_decoded_grow(mm_decoded *out, size_t hint, size_t limit) {
    if (out->len < out->cap) return MM_DECODE_OK;
    if (out->cap >= limit) return MM_DECODE_TOO_LARGE;
    size_t cap = out->cap ? out->cap * 2 : (hint > 4096 ? hint : 4096);
    if (cap > limit) cap = limit;
    unsigned char *data = (unsigned char *)realloc(out->data, cap);
    if (data == NULL) return MM_DECODE_NOMEM;
    out->data = data;
    out->cap = cap;
    return MM_DECODE_OK;
}

/// zlib's inflate with `window_bits` (15 + 32: gzip or zlib, told apart by the header; 15:
/// zlib; -15: raw deflate). Stops at the end of the stream; bytes after it are ignored.
static inline int mm_inflate(const unsigned char *in, size_t n, int window_bits, size_t limit, mm_decoded *out) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, window_bits) != Z_OK) return MM_DECODE_NOMEM;
    z.next_in = (Bytef *)in;
    int status = MM_DECODE_BAD;
    size_t left = n;
    for (;;) {
        int rc = mm_decoded_grow(out, n * 4, limit);
        if (rc != MM_DECODE_OK) { status = rc; break; }
        // zlib counts in 32-bit units: feed and drain at most 1 GiB a step.
        uInt feed = left > (1u << 30) ? (1u << 30) : (uInt)left;
        size_t room = out->cap - out->len;
        z.avail_in = feed;
        z.next_out = out->data + out->len;
        z.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt before_out = z.avail_out;
        int r = inflate(&z, Z_NO_FLUSH);
        left -= feed - z.avail_in;
        out->len += before_out - z.avail_out;
        if (r == Z_STREAM_END) { status = MM_DECODE_OK; break; }
        if (r == Z_MEM_ERROR) { status = MM_DECODE_NOMEM; break; }
        if (r != Z_OK && r != Z_BUF_ERROR) break;                  // data or stream error
        if (left == 0 && z.avail_out != 0) { status = MM_DECODE_OK; break; }   // cut short: what decoded
    }
    inflateEnd(&z);
    return status;
}

/// `gzip` and `x-gzip`: gzip, or zlib, as libcurl takes them.
static inline int mm_decode_gzip(const unsigned char *in, size_t n, size_t limit, mm_decoded *out) {
    return mm_inflate(in, n, 15 + 32, limit, out);
}

/// `deflate`: the zlib format (RFC 9110), or raw deflate, which some servers send instead.
static inline int mm_decode_deflate(const unsigned char *in, size_t n, size_t limit, mm_decoded *out) {
    // A zlib stream starts with a header whose 16-bit value is a multiple of 31, method 8.
    if (n >= 2 && (in[0] & 0x0F) == 8 && ((unsigned)in[0] << 8 | in[1]) % 31 == 0) {
        return mm_inflate(in, n, 15, limit, out);
    }
    return mm_inflate(in, n, -15, limit, out);
}

// MARK: permessage-deflate (RFC 7692): a raw-deflate stream per direction, kept across messages
// unless a *_no_context_takeover parameter says to start each message afresh.

/// A compressor for messages: raw deflate of `window_bits` (9..15), `level` 0..9 (0: stored
/// blocks, which refer to nothing, whatever window the peer keeps). NULL when out of memory.
static inline z_stream *mm_deflater_new(int level, int window_bits) {
    z_stream *z = (z_stream *)calloc(1, sizeof *z);
    if (z == NULL) return NULL;
    if (deflateInit2(z, level, Z_DEFLATED, -window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) { free(z); return NULL; }
    return z;
}

static inline void mm_deflater_free(z_stream *z) {
    if (z == NULL) return;
    deflateEnd(z);
    free(z);
}

/// One message compressed (a sync flush, its trailing 00 00 FF FF removed, as RFC 7692 §7.2.1
/// says); `reset` starts the next message without this one's context.
static inline int mm_deflater_message(z_stream *z, const unsigned char *in, size_t n, int reset, mm_decoded *out) {
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)n;
    for (;;) {
        int rc = mm_decoded_grow(out, n / 2 + 64, (size_t)1 << 40);
        if (rc != MM_DECODE_OK) return rc;
        z->next_out = out->data + out->len;
        z->avail_out = (uInt)(out->cap - out->len);
        uInt before = z->avail_out;
        int r = deflate(z, Z_SYNC_FLUSH);
        out->len += before - z->avail_out;
        if (r != Z_OK && r != Z_BUF_ERROR) return MM_DECODE_BAD;
        if (z->avail_in == 0 && z->avail_out != 0) break;
    }
    if (out->len >= 4 && memcmp(out->data + out->len - 4, "\x00\x00\xff\xff", 4) == 0) out->len -= 4;
    if (out->len == 0) {   // an empty message: one empty stored block's first byte (§7.2.3.6)
        int rc = mm_decoded_grow(out, 1, (size_t)1 << 40);
        if (rc != MM_DECODE_OK) return rc;
        out->data[out->len++] = 0x00;
    }
    if (reset) deflateReset(z);
    return MM_DECODE_OK;
}

/// A decompressor for messages: raw inflate of the largest window (it reads any smaller one).
static inline z_stream *mm_inflater_new(void) {
    z_stream *z = (z_stream *)calloc(1, sizeof *z);
    if (z == NULL) return NULL;
    if (inflateInit2(z, -15) != Z_OK) { free(z); return NULL; }
    return z;
}

static inline void mm_inflater_free(z_stream *z) {
    if (z == NULL) return;
    inflateEnd(z);
    free(z);
}

/// One message decompressed: its bytes, then the 00 00 FF FF the sender removed; at most
/// `limit` bytes out (MM_DECODE_TOO_LARGE past it). `reset`: the peer starts each message afresh.
static inline int mm_inflater_message(z_stream *z, const unsigned char *in, size_t n, size_t limit, int reset, mm_decoded *out) {
    static const unsigned char tail[4] = { 0x00, 0x00, 0xff, 0xff };
    for (int part = 0; part < 2; part++) {
        z->next_in = (Bytef *)(part == 0 ? in : tail);
        z->avail_in = (uInt)(part == 0 ? n : 4);
        while (z->avail_in > 0) {
            if (out->len == out->cap) {
                if (out->cap >= limit) return MM_DECODE_TOO_LARGE;
                int rc = mm_decoded_grow(out, n * 2 + 64, limit);
                if (rc != MM_DECODE_OK) return rc;
            }
            z->next_out = out->data + out->len;
            z->avail_out = (uInt)(out->cap - out->len);
            uInt before = z->avail_out;
            int r = inflate(z, Z_SYNC_FLUSH);
            out->len += before - z->avail_out;
            if (r == Z_STREAM_END) { inflateReset(z); continue; }   // a final block: the next starts anew
            if (r == Z_BUF_ERROR && before - z->avail_out == 0 && z->avail_in > 0 && out->len < out->cap) return MM_DECODE_BAD;
            if (r != Z_OK && r != Z_BUF_ERROR) return MM_DECODE_BAD;
        }
    }
    // Output still buffered inside zlib once the input is consumed.
    for (;;) {
        if (out->len == out->cap) {
            if (out->cap >= limit) return MM_DECODE_TOO_LARGE;
            int rc = mm_decoded_grow(out, 64, limit);
            if (rc != MM_DECODE_OK) return rc;
        }
        z->next_out = out->data + out->len;
        z->avail_out = (uInt)(out->cap - out->len);
        uInt before = z->avail_out;
        int r = inflate(z, Z_SYNC_FLUSH);
        out->len += before - z->avail_out;
        if (before - z->avail_out == 0) break;
        if (r != Z_OK && r != Z_BUF_ERROR && r != Z_STREAM_END) return MM_DECODE_BAD;
    }
    if (reset) inflateReset(z);
    return MM_DECODE_OK;
}

/// A whole body gzipped at zlib's default level (OTLP exports with
/// OTEL_EXPORTER_OTLP_COMPRESSION=gzip). Bodies up to 1 GiB.
static inline int mm_encode_gzip(const unsigned char *in, size_t n, mm_decoded *out) {
    if (n > (1u << 30)) return MM_DECODE_TOO_LARGE;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return MM_DECODE_NOMEM;
    uLong bound = deflateBound(&z, (uLong)n);
    out->data = (unsigned char *)malloc(bound);
    if (out->data == NULL) { deflateEnd(&z); return MM_DECODE_NOMEM; }
    out->cap = bound;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out->data;
    z.avail_out = (uInt)bound;
    int r = deflate(&z, Z_FINISH);
    out->len = bound - z.avail_out;
    deflateEnd(&z);
    return r == Z_STREAM_END ? MM_DECODE_OK : MM_DECODE_BAD;
}

#endif
