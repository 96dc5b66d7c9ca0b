#ifndef MOONMOCK_CCURL_H
#define MOONMOCK_CCURL_H

// libcurl for mock.proxy on the server: curl_easy_setopt is variadic, which Swift cannot
// call, so one request's whole setup, transfer and collection is a C function here.

#include <stddef.h>

// A growable byte buffer the transfer's callbacks fill.
typedef struct mm_bytes {
    unsigned char *data;
    size_t len;
    size_t cap;
} mm_bytes;

typedef struct mm_upstream_result {
    long status;
    mm_bytes head;          // the last header block (after any 1xx), CRLF-separated lines
    mm_bytes body;          // as the upstream sent it (no content coding undone)
    int code;               // CURLcode: 0 when the transfer worked
    char error[256];        // curl's own words when it did not
} mm_upstream_result;

// Once per process, before any handle.
void mm_upstream_global_init(void);
// A handle for one worker thread; reused for every request so that connections stay open.
void *mm_upstream_handle_new(void);
void mm_upstream_handle_free(void *handle);
// One request. `headers` are "Name: value" strings ("Name:" removes one curl would add).
// Returns the CURLcode (0 on success); `out` is filled either way and freed with
// mm_upstream_result_free.
int mm_upstream_perform(void *handle, const char *method, const char *url, const char *const *headers, size_t header_count,
                        const unsigned char *body, size_t body_len, long timeout_ms, int insecure, mm_upstream_result *out);
void mm_upstream_result_free(mm_upstream_result *result);

#endif
