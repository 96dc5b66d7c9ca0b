#ifndef MOONMOCK_CCOMPRESSION_SHIM_H
#define MOONMOCK_CCOMPRESSION_SHIM_H

// Brotli and Zstandard decoders for the content codings URLSession's libcurl takes off a
// response body on Linux (gzip and deflate are CZlib's), so that the in-process door hands a task the body the socket door
// does. Each decodes a whole body held in memory into a growing buffer, in C because the three
// libraries' stream APIs are C structs driven in a loop. As with libcurl, a body that ends
// before its stream does gives what decoded up to there; bytes that break the format fail.

#include <brotli/decode.h>
#include <zstd.h>
// The output buffer and codes are CZlib's (one copy).
#include "../CZlib/shim.h"

/// `br`: Brotli.
static inline int mm_decode_brotli(const unsigned char *in, size_t n, size_t limit, mm_decoded *out) {
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (s == NULL) return MM_DECODE_NOMEM;
    const uint8_t *next_in = in;
    size_t avail_in = n;
    int status = MM_DECODE_BAD;
    for (;;) {
        int rc = mm_decoded_grow(out, n * 4, limit);
        if (rc != MM_DECODE_OK) { status = rc; break; }
        size_t avail_out = out->cap - out->len;
        uint8_t *next_out = out->data + out->len;
        BrotliDecoderResult r = BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
        out->len = (size_t)(next_out - out->data);
        if (r == BROTLI_DECODER_RESULT_SUCCESS) { status = MM_DECODE_OK; break; }
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) continue;
        if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) status = MM_DECODE_OK;   // cut short: what decoded
        break;
    }
    BrotliDecoderDestroyInstance(s);
    return status;
}

/// `zstd`: Zstandard, one frame or several in a row.
static inline int mm_decode_zstd(const unsigned char *in, size_t n, size_t limit, mm_decoded *out) {
    ZSTD_DStream *s = ZSTD_createDStream();
    if (s == NULL) return MM_DECODE_NOMEM;
    ZSTD_inBuffer input = { in, n, 0 };
    int status = MM_DECODE_BAD;
    for (;;) {
        int rc = mm_decoded_grow(out, n * 4, limit);
        if (rc != MM_DECODE_OK) { status = rc; break; }
        ZSTD_outBuffer output = { out->data, out->cap, out->len };
        size_t r = ZSTD_decompressStream(s, &output, &input);
        out->len = output.pos;
        if (ZSTD_isError(r)) break;
        // All input read and room left over: done (a last frame cut short gives what decoded).
        if (input.pos == input.size && output.pos < output.size) { status = MM_DECODE_OK; break; }
    }
    ZSTD_freeDStream(s);
    return status;
}

#endif
