#include "CCurl.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// The most an upstream answer may carry into memory (a mock server is not a download proxy).
#define MM_UPSTREAM_MAX_BYTES (256u << 20)

static int append(mm_bytes *b, const char *data, size_t n) {
    if (b->len + n > MM_UPSTREAM_MAX_BYTES) return 0;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        unsigned char *grown = realloc(b->data, cap);
        if (grown == NULL) return 0;
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return 1;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    return append(&((mm_upstream_result *)user)->body, data, size * count) ? size * count : 0;
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    mm_upstream_result *r = user;
    size_t n = size * count;
    // A new status line starts a new block: keep only the last (after 100 Continue and the like).
    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) r->head.len = 0;
    return append(&r->head, data, n) ? n : 0;
}

// The options of one request, on a fresh or reset handle: the header list (with "Expect:" added:
// no 100-continue round trip), HTTP/1.1, no redirects followed (they go to the client as they
// are), the timeout, the certificate check, the result's callbacks; `body` must live as long as
// the transfer. Returns the header list, which the caller frees after the transfer.
static struct curl_slist *setup(CURL *h, const char *method, const char *url, const char *const *headers, size_t header_count,
                                const unsigned char *body, size_t body_len, long timeout_ms, int insecure, mm_upstream_result *out) {
    struct curl_slist *list = NULL;
    for (size_t i = 0; i < header_count; i++) list = curl_slist_append(list, headers[i]);
    list = curl_slist_append(list, "Expect:");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, insecure ? 0L : 2L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, out->error);
    // Loopback never goes through a proxy from the environment (CI machines often set one).
    curl_easy_setopt(h, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    if (strcasecmp(method, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcasecmp(method, "GET") != 0 || body_len > 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        if (body_len > 0 || strcasecmp(method, "POST") == 0 || strcasecmp(method, "PUT") == 0 || strcasecmp(method, "PATCH") == 0) {
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
            curl_easy_setopt(h, CURLOPT_POSTFIELDS, body_len > 0 ? (const char *)body : "");
        }
    }
    return list;
}

void mm_upstream_global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

void *mm_upstream_handle_new(void) { return curl_easy_init(); }

void mm_upstream_handle_free(void *handle) { curl_easy_cleanup(handle); }

int mm_upstream_perform(void *handle, const char *method, const char *url, const char *const *headers, size_t header_count,
                        const unsigned char *body, size_t body_len, long timeout_ms, int insecure, mm_upstream_result *out) {
    CURL *h = handle;
    memset(out, 0, sizeof *out);
    curl_easy_reset(h);   // options only: the connection cache stays
    struct curl_slist *list = setup(h, method, url, headers, header_count, body, body_len, timeout_ms, insecure, out);
    CURLcode code = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    out->status = status;
    out->code = (int)code;
    if (code != CURLE_OK && out->error[0] == 0) {
        strncpy(out->error, curl_easy_strerror(code), sizeof out->error - 1);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(list);
    return (int)code;
}

void mm_upstream_result_free(mm_upstream_result *result) {
    free(result->head.data);
    free(result->body.data);
    memset(result, 0, sizeof *result);
}

mm_transfer *mm_transfer_new(const char *method, const char *url, const char *const *headers, size_t header_count,
                             const unsigned char *body, size_t body_len, long timeout_ms, int insecure, const char *ca_file) {
    mm_transfer *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    CURL *h = curl_easy_init();
    if (h == NULL) { free(t); return NULL; }
    t->easy = h;
    if (body_len > 0) {
        t->body = malloc(body_len);
        if (t->body == NULL) { curl_easy_cleanup(h); free(t); return NULL; }
        memcpy(t->body, body, body_len);
    }
    t->list = setup(h, method, url, headers, header_count, t->body, body_len, timeout_ms, insecure, &t->result);
    curl_easy_setopt(h, CURLOPT_PRIVATE, t);
    if (ca_file != NULL && ca_file[0] != 0) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
    return t;
}

void mm_transfer_free(mm_transfer *t) {
    if (t == NULL) return;
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->list);
    free(t->body);
    mm_upstream_result_free(&t->result);
    free(t);
}

void mm_transfer_collect(mm_transfer *t, int code) {
    long status = 0;
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    t->result.status = status;
    t->result.code = code;
    if (code != CURLE_OK && t->result.error[0] == 0) {
        strncpy(t->result.error, curl_easy_strerror((CURLcode)code), sizeof t->result.error - 1);
    }
}

void *mm_multi_new(void) {
    CURLM *m = curl_multi_init();
    if (m != NULL) curl_multi_setopt(m, CURLMOPT_MAX_HOST_CONNECTIONS, 64L);
    return m;
}

int mm_multi_add(void *multi, mm_transfer *t) { return (int)curl_multi_add_handle(multi, t->easy); }

int mm_multi_remove(void *multi, mm_transfer *t) { return (int)curl_multi_remove_handle(multi, t->easy); }

int mm_multi_run(void *multi, int timeout_ms) {
    int running = 0;
    curl_multi_poll(multi, NULL, 0, timeout_ms, NULL);
    curl_multi_perform(multi, &running);
    return running;
}

mm_transfer *mm_multi_done(void *multi, int *code) {
    int left = 0;
    CURLMsg *msg;
    while ((msg = curl_multi_info_read(multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE) continue;
        mm_transfer *t = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        *code = (int)msg->data.result;
        return t;
    }
    return NULL;
}

void mm_multi_wakeup(void *multi) { curl_multi_wakeup(multi); }
