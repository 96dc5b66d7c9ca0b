#include "COpenSSL.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

// Linux: no SIGPIPE for this send. Darwin sets SO_NOSIGPIPE on each accepted socket instead
// (older SDKs have no MSG_NOSIGNAL).
#if defined(MSG_NOSIGNAL)
#define MM_NOSIGNAL MSG_NOSIGNAL
#else
#define MM_NOSIGNAL 0
#endif

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

// The newest error on OpenSSL's queue as text (after `what`), and the queue emptied: a failure
// on one connection must not leave errors that a later, unrelated call would report.
static void take_error(const char *what, char *error, size_t error_len) {
    unsigned long code = ERR_get_error();
    unsigned long last;
    while ((last = ERR_get_error()) != 0) code = last;
    if (error && error_len) {
        char reason[256] = "";
        if (code) ERR_error_string_n(code, reason, sizeof reason);
        snprintf(error, error_len, "%s%s%s", what, code ? ": " : "", reason);
    }
    ERR_clear_error();
}

// MARK: a socket BIO that sends with MSG_NOSIGNAL

// OpenSSL's own socket BIO writes with write(2): a client that closed would raise SIGPIPE and end
// the process. This one uses send/recv, and remembers an EOF for BIO_eof (which OpenSSL asks to
// tell a FIN from an error).
typedef struct { int fd; int eof; } mm_socket;

static int socket_write(BIO *bio, const char *data, size_t length, size_t *written) {
    mm_socket *s = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = send(s->fd, data, length, MM_NOSIGNAL);
    if (n >= 0) { *written = (size_t)n; return 1; }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_write(bio);
    return 0;
}

static int socket_read(BIO *bio, char *data, size_t length, size_t *read) {
    mm_socket *s = BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    ssize_t n = recv(s->fd, data, length, 0);
    if (n > 0) { *read = (size_t)n; return 1; }
    if (n == 0) s->eof = 1;
    else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) BIO_set_retry_read(bio);
    return 0;
}

static long socket_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)number; (void)pointer;
    mm_socket *s = BIO_get_data(bio);
    switch (command) {
    case BIO_CTRL_FLUSH: return 1;
    case BIO_CTRL_EOF: return s ? s->eof : 1;
    case BIO_CTRL_PUSH: case BIO_CTRL_POP: return 0;
    default: return 0;
    }
}

static int socket_destroy(BIO *bio) {
    free(BIO_get_data(bio));
    BIO_set_data(bio, NULL);
    return 1;
}

static BIO_METHOD *shared_method;
static CRYPTO_ONCE method_once = CRYPTO_ONCE_STATIC_INIT;

static void make_method(void) {
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK | BIO_TYPE_DESCRIPTOR, "moonmock socket");
    if (!m) return;
    BIO_meth_set_write_ex(m, socket_write);
    BIO_meth_set_read_ex(m, socket_read);
    BIO_meth_set_ctrl(m, socket_ctrl);
    BIO_meth_set_destroy(m, socket_destroy);
    shared_method = m;
}

static BIO_METHOD *socket_method(void) {
    CRYPTO_THREAD_run_once(&method_once, make_method);
    return shared_method;
}

// MARK: contexts and sessions

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg) {
    (void)ssl;
    // The server's preference: h2 first when offered (arg non-NULL), then HTTP/1.1.
    static const unsigned char both[] = { 2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };
    const unsigned char *mine = arg ? both : both + 3;
    unsigned int mine_len = arg ? sizeof both : sizeof both - 3;
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, out_len, mine, mine_len, in, in_len) == OPENSSL_NPN_NEGOTIATED) {
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
    }
    // A client offering only other protocols (h2 alone) gets no ALPN answer and HTTP/1.1 anyway.
    return SSL_TLSEXT_ERR_NOACK;
}

SSL_CTX *mm_tls_server_context(const char *cert_pem, const char *key_pem, int offer_h2, char *error, size_t error_len) {
    ERR_clear_error();
    SSL_CTX *context = SSL_CTX_new(TLS_server_method());
    if (!context) { take_error("cannot create a TLS context", error, error_len); return NULL; }
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION | SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_COMPRESSION);
    // A write may take part of a buffer, and be retried from a buffer that has moved.
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_alpn_select_cb(context, select_alpn, offer_h2 ? (void *)1 : NULL);

    BIO *certs = BIO_new_mem_buf(cert_pem, -1);
    X509 *leaf = certs ? PEM_read_bio_X509_AUX(certs, NULL, NULL, NULL) : NULL;
    if (!leaf || SSL_CTX_use_certificate(context, leaf) != 1) {
        take_error("the TLS certificate is not a PEM certificate", error, error_len);
        X509_free(leaf); BIO_free(certs); SSL_CTX_free(context);
        return NULL;
    }
    // The rest of the file is the chain.
    X509 *extra;
    while ((extra = PEM_read_bio_X509(certs, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(context, extra) != 1) { X509_free(extra); break; }
    }
    ERR_clear_error();   // the loop ends on "no start line"
    BIO_free(certs);

    BIO *keys = BIO_new_mem_buf(key_pem, -1);
    EVP_PKEY *key = keys ? PEM_read_bio_PrivateKey(keys, NULL, NULL, NULL) : NULL;
    BIO_free(keys);
    const char *problem = NULL;
    if (!key) problem = "the TLS key is not a PEM private key";
    else if (X509_check_private_key(leaf, key) != 1) problem = "the TLS key does not match the certificate";
    else if (SSL_CTX_use_PrivateKey(context, key) != 1) problem = "the TLS key cannot be used";
    X509_free(leaf);
    EVP_PKEY_free(key);
    if (problem) {
        take_error(problem, error, error_len);
        SSL_CTX_free(context);
        return NULL;
    }
    return context;
}

void mm_tls_context_free(SSL_CTX *context) { SSL_CTX_free(context); }

SSL_CTX *mm_tls_client_context(const char *ca_file) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (!context) return NULL;
    if (SSL_CTX_load_verify_locations(context, ca_file, NULL) != 1) {
        SSL_CTX_free(context);
        ERR_clear_error();
        return NULL;
    }
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF);
    return context;
}

SSL *mm_tls_session(SSL_CTX *context, int fd) {
    SSL *session = SSL_new(context);
    if (!session) { ERR_clear_error(); return NULL; }
    BIO *bio = BIO_new(socket_method());
    mm_socket *s = malloc(sizeof *s);
    if (!bio || !s) { free(s); BIO_free(bio); SSL_free(session); ERR_clear_error(); return NULL; }
    s->fd = fd;
    s->eof = 0;
    BIO_set_data(bio, s);
    BIO_set_init(bio, 1);
    SSL_set_bio(session, bio, bio);
    SSL_set_accept_state(session);
    return session;
}

void mm_tls_session_free(SSL *session, int graceful) {
    if (!session) return;
    if (graceful && SSL_is_init_finished(session)) SSL_shutdown(session);
    SSL_free(session);
    ERR_clear_error();
}

static long outcome(SSL *session, int ok, size_t moved) {
    if (ok == 1) return (long)moved;
    int code = SSL_get_error(session, ok);
    switch (code) {
    case SSL_ERROR_WANT_READ: return MM_TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE: return MM_TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN: ERR_clear_error(); return MM_TLS_CLOSED;
    default: ERR_clear_error(); return MM_TLS_ERROR;
    }
}

long mm_tls_read(SSL *session, void *buffer, size_t length) {
    size_t n = 0;
    int ok = SSL_read_ex(session, buffer, length, &n);
    return outcome(session, ok, n);
}

long mm_tls_write(SSL *session, const void *buffer, size_t length) {
    size_t n = 0;
    int ok = SSL_write_ex(session, buffer, length, &n);
    return outcome(session, ok, n);
}

void mm_tls_alpn(SSL *session, char *out, size_t out_len) {
    const unsigned char *data = NULL;
    unsigned int length = 0;
    SSL_get0_alpn_selected(session, &data, &length);
    if (!out_len) return;
    size_t n = length < out_len - 1 ? length : out_len - 1;
    if (n) memcpy(out, data, n);
    out[n] = 0;
}

// MARK: the local certificate authority

static char *pem_text(BIO *bio) {
    char *data = NULL;
    long length = BIO_get_mem_data(bio, &data);
    char *text = malloc((size_t)length + 1);
    if (!text) return NULL;
    memcpy(text, data, (size_t)length);
    text[length] = 0;
    return text;
}

static int add_extension(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *extension = X509V3_EXT_nconf_nid(NULL, &v3, nid, value);
    if (!extension) return 0;
    int ok = X509_add_ext(cert, extension, -1);
    X509_EXTENSION_free(extension);
    return ok;
}

// A certificate for `key` named `common_name`, valid from a day ago for `days`, with a random serial.
static X509 *new_certificate(EVP_PKEY *key, const char *common_name, int days) {
    X509 *cert = X509_new();
    if (!cert) return NULL;
    unsigned char serial[16];
    BIGNUM *number = NULL;
    if (RAND_bytes(serial, sizeof serial) != 1) goto fail;
    serial[0] &= 0x7F;   // positive
    number = BN_bin2bn(serial, sizeof serial, NULL);
    if (!number || !BN_to_ASN1_INTEGER(number, X509_get_serialNumber(cert))) goto fail;
    BN_free(number);
    number = NULL;
    X509_set_version(cert, 2);
    X509_gmtime_adj(X509_getm_notBefore(cert), -24 * 3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 24 * 3600);
    X509_set_pubkey(cert, key);
    X509_NAME *name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)"Moonmock", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)common_name, -1, -1, 0);
    return cert;
fail:
    BN_free(number);
    X509_free(cert);
    return NULL;
}

static int write_pair(X509 *cert, EVP_PKEY *key, char **cert_pem, char **key_pem) {
    BIO *c = BIO_new(BIO_s_mem()), *k = BIO_new(BIO_s_mem());
    int ok = c && k && PEM_write_bio_X509(c, cert) && PEM_write_bio_PrivateKey(k, key, NULL, NULL, 0, NULL, NULL);
    if (ok) {
        *cert_pem = pem_text(c);
        *key_pem = pem_text(k);
        ok = *cert_pem && *key_pem;
    }
    BIO_free(c);
    BIO_free(k);
    return ok;
}

int mm_tls_make_authority(const char *common_name, char **cert_pem, char **key_pem, char *error, size_t error_len) {
    ERR_clear_error();
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = key ? new_certificate(key, common_name, 3650) : NULL;
    int ok = cert != NULL;
    if (ok) {
        X509_set_issuer_name(cert, X509_get_subject_name(cert));
        ok = add_extension(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0")
            && add_extension(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign")
            && add_extension(cert, cert, NID_subject_key_identifier, "hash")
            && X509_sign(cert, key, EVP_sha256()) > 0
            && write_pair(cert, key, cert_pem, key_pem);
    }
    if (!ok) take_error("cannot make the local certificate authority", error, error_len);
    X509_free(cert);
    EVP_PKEY_free(key);
    return ok;
}

int mm_tls_make_server_certificate(const char *ca_cert_pem, const char *ca_key_pem, const char *const *names, int count,
                                   int days, char **cert_pem, char **key_pem, char *error, size_t error_len) {
    ERR_clear_error();
    BIO *cb = BIO_new_mem_buf(ca_cert_pem, -1), *kb = BIO_new_mem_buf(ca_key_pem, -1);
    X509 *ca = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
    EVP_PKEY *ca_key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
    BIO_free(cb);
    BIO_free(kb);
    EVP_PKEY *key = NULL;
    X509 *cert = NULL;
    int ok = 0;
    // subjectAltName: DNS:name or IP:address for each name.
    size_t san_len = 1;
    for (int i = 0; i < count; i++) san_len += strlen(names[i]) + 5;
    char *san = malloc(san_len);
    if (!ca || !ca_key || !san || count < 1) goto done;
    san[0] = 0;
    for (int i = 0; i < count; i++) {
        unsigned char address[16];
        int ip = inet_pton(AF_INET, names[i], address) == 1 || inet_pton(AF_INET6, names[i], address) == 1;
        if (i) strcat(san, ",");
        strcat(san, ip ? "IP:" : "DNS:");
        strcat(san, names[i]);
    }
    key = EVP_EC_gen("P-256");
    cert = key ? new_certificate(key, names[0], days) : NULL;
    ok = cert != NULL
        && X509_set_issuer_name(cert, X509_get_subject_name(ca))
        && add_extension(cert, ca, NID_basic_constraints, "critical,CA:FALSE")
        && add_extension(cert, ca, NID_key_usage, "critical,digitalSignature")
        && add_extension(cert, ca, NID_ext_key_usage, "serverAuth")
        && add_extension(cert, ca, NID_subject_alt_name, san)
        && add_extension(cert, ca, NID_authority_key_identifier, "keyid")
        && X509_sign(cert, ca_key, EVP_sha256()) > 0
        && write_pair(cert, key, cert_pem, key_pem);
done:
    if (!ok) take_error("cannot make the server certificate", error, error_len);
    free(san);
    X509_free(cert);
    EVP_PKEY_free(key);
    X509_free(ca);
    EVP_PKEY_free(ca_key);
    return ok;
}

long mm_tls_seconds_left(const char *cert_pem) {
    BIO *bio = BIO_new_mem_buf(cert_pem, -1);
    X509 *cert = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    long seconds = 0;
    if (cert) {
        int days = 0, secs = 0;
        if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert)) == 1) seconds = (long)days * 86400 + secs;
        if (seconds == 0) seconds = -1;
    }
    X509_free(cert);
    ERR_clear_error();
    return seconds;
}

void mm_tls_free_string(char *text) { free(text); }

#include <openssl/evp.h>

void mm_sha1(const void *bytes, size_t length, unsigned char *digest) {
    unsigned int size = 0;
    EVP_Digest(bytes, length, digest, &size, EVP_sha1(), NULL);
}
