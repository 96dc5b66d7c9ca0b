#ifndef MOONMOCK_COPENSSL_H
#define MOONMOCK_COPENSSL_H
// OpenSSL for the server's HTTPS: a server context made from PEM text, non-blocking reads and
// writes with one result code each (OpenSSL's error queue stays on this side), and the local
// certificate authority of `--tls self-signed`. Swift sees plain functions, no macros.
#include <stddef.h>
#include <openssl/ssl.h>
#include <openssl/err.h>

/// What `mm_tls_read` and `mm_tls_write` return when they move no bytes.
enum {
    MM_TLS_CLOSED = 0,       // the peer closed (close_notify, or a plain FIN)
    MM_TLS_WANT_READ = -1,   // the socket has nothing more now: wait for EPOLLIN
    MM_TLS_WANT_WRITE = -2,  // the socket is full: wait for EPOLLOUT
    MM_TLS_ERROR = -3        // a fatal TLS or socket error: close without close_notify
};

/// A TLS 1.2+ server context from a PEM certificate chain and key; ALPN picks http/1.1.
/// NULL with a message in `error` when the PEM text is unusable or the key does not match.
// offer_h2: ALPN selects "h2" when the client offers it, else "http/1.1".
SSL_CTX *mm_tls_server_context(const char *cert_pem, const char *key_pem, int offer_h2, char *error, size_t error_len);
void mm_tls_context_free(SSL_CTX *context);

/// A client context that verifies servers against the PEM authorities in `ca_file` (the tests'
/// raw TLS client). NULL when the file is unusable.
SSL_CTX *mm_tls_client_context(const char *ca_file);

/// A server-side session on the non-blocking socket `fd` (writes never raise SIGPIPE).
SSL *mm_tls_session(SSL_CTX *context, int fd);
/// Ends a session: sends close_notify when `graceful` (best effort, never waits), then frees it.
void mm_tls_session_free(SSL *session, int graceful);

/// Bytes read (> 0), or one of the MM_TLS_ codes. The handshake runs inside the first reads.
long mm_tls_read(SSL *session, void *buffer, size_t length);
/// Bytes written (> 0, possibly fewer than `length`), or one of the MM_TLS_ codes.
long mm_tls_write(SSL *session, const void *buffer, size_t length);
/// The protocol ALPN chose ("http/1.1"), or an empty string.
void mm_tls_alpn(SSL *session, char *out, size_t out_len);

/// A new local certificate authority (P-256, ten years): PEM text in malloc'd strings.
/// 1 on success; 0 with a message in `error`.
int mm_tls_make_authority(const char *common_name, char **cert_pem, char **key_pem, char *error, size_t error_len);
/// A server certificate for `names` (DNS names or IP addresses), signed by the authority,
/// valid for `days`. 1 on success; 0 with a message in `error`.
int mm_tls_make_server_certificate(const char *ca_cert_pem, const char *ca_key_pem, const char *const *names, int count,
                                   int days, char **cert_pem, char **key_pem, char *error, size_t error_len);
/// Seconds until the first certificate in `cert_pem` expires (negative when it has); 0 when unreadable.
long mm_tls_seconds_left(const char *cert_pem);
void mm_tls_free_string(char *text);

/// SHA-1 of `length` bytes into `digest` (20 bytes): the WebSocket handshake's accept value.
void mm_sha1(const void *bytes, size_t length, unsigned char *digest);

#endif
