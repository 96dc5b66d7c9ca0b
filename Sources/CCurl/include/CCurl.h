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


// Transfers on one multi handle (mock.fetch, webhooks): many at once on one thread, each an
// easy handle set up here (variadic setopt) and collected when the multi handle says it is done.
typedef struct mm_transfer {
    void *easy;
    void *list;             // the header list, freed with the transfer
    mm_upstream_result result;
    unsigned char *body;    // a copy of the request body (curl reads it during the transfer)
} mm_transfer;

// A transfer set up but not started. `ca_file`: a PEM bundle to trust instead of the
// system's (NULL: the system's). NULL when curl cannot make a handle.
mm_transfer *mm_transfer_new(const char *method, const char *url, const char *const *headers, size_t header_count,
                             const unsigned char *body, size_t body_len, long timeout_ms, int insecure, const char *ca_file);
void mm_transfer_free(mm_transfer *t);
// The status, and the CURLcode's words into result.error when `code` is not 0.
void mm_transfer_collect(mm_transfer *t, int code);

void *mm_multi_new(void);
int mm_multi_add(void *multi, mm_transfer *t);
int mm_multi_remove(void *multi, mm_transfer *t);
// Waits up to timeout_ms for activity (or a wakeup), then moves every transfer on.
int mm_multi_run(void *multi, int timeout_ms);
// A finished transfer and its CURLcode, or NULL when none is left to collect.
mm_transfer *mm_multi_done(void *multi, int *code);
// Ends a wait of mm_multi_run from another thread.
void mm_multi_wakeup(void *multi);

#endif
