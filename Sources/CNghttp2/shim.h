#ifndef MOONMOCK_CNGHTTP2_SHIM_H
#define MOONMOCK_CNGHTTP2_SHIM_H

// nghttp2 for the server's HTTP/2 framing (MoonmockServer/HTTP2): sessions fed and drained by
// the event loops (mem_recv / mem_send), no I/O of nghttp2's own. Debian: libnghttp2-dev;
// macOS: Homebrew's nghttp2 (assumed at /opt/homebrew or /usr/local, found through pkg-config).
#include <nghttp2/nghttp2.h>

// The frame's type, flags and stream (a union in C, awkward from Swift).
static inline uint8_t mm_h2_frame_type(const nghttp2_frame *f) { return f->hd.type; }
static inline uint8_t mm_h2_frame_flags(const nghttp2_frame *f) { return f->hd.flags; }
static inline int32_t mm_h2_frame_stream(const nghttp2_frame *f) { return f->hd.stream_id; }
// A HEADERS frame's category: request headers, or trailers after a body.
static inline int mm_h2_headers_category(const nghttp2_frame *f) { return (int)f->headers.cat; }

#endif
