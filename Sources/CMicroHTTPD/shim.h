#ifndef MOONMOCK_CMICROHTTPD_SHIM_H
#define MOONMOCK_CMICROHTTPD_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <microhttpd.h>

// Everything here exists because MHD_start_daemon and MHD_get_*_info are variadic or return
// unions, neither of which Swift imports usefully.

/// What the Swift side passes to start a daemon: fixed fields instead of varargs.
typedef struct mm_daemon_config {
    unsigned int flags;
    const struct sockaddr *address;       // bind address (IPv4 or IPv6), port 0 picks one
    unsigned int thread_pool_size;        // 0 or 1: one internal polling thread
    unsigned int connection_timeout;      // seconds of inactivity before MHD closes a connection
    size_t connection_memory_limit;       // per-connection buffer for headers
    const char *tls_key_pem;              // NULL for plain HTTP
    const char *tls_cert_pem;
    MHD_AccessHandlerCallback handler;
    void *handler_cls;
    MHD_RequestCompletedCallback completed;
    void *completed_cls;
    void *(*uri_logger)(void *cls, const char *uri, struct MHD_Connection *connection);
    void *uri_logger_cls;
    int listen_fd;                        // a socket from mm_listen, or -1 to bind `address`
} mm_daemon_config;

// MHD_start_daemon is variadic: the options go through one MHD_OPTION_ARRAY instead, with
// the TLS entries only when a key and certificate are given.
static inline struct MHD_Daemon *mm_start_daemon(const mm_daemon_config *c) {
    unsigned int pool = c->thread_pool_size > 1 ? c->thread_pool_size : 0;
    int tls = c->tls_key_pem != NULL && c->tls_cert_pem != NULL;
    struct MHD_OptionItem options[] = {
        c->listen_fd >= 0 ? (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, c->listen_fd, NULL }
                          : (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)c->address },
        { MHD_OPTION_THREAD_POOL_SIZE, pool, NULL },
        { MHD_OPTION_CONNECTION_TIMEOUT, c->connection_timeout, NULL },
        { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)c->connection_memory_limit, NULL },
        { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)c->completed, c->completed_cls },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)c->uri_logger, c->uri_logger_cls },
        { tls ? MHD_OPTION_HTTPS_MEM_KEY : MHD_OPTION_END, 0, (void *)c->tls_key_pem },
        { tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, (void *)c->tls_cert_pem },
        { MHD_OPTION_END, 0, NULL },
    };
    return MHD_start_daemon(c->flags | (tls ? MHD_USE_TLS : 0), 0, NULL, NULL, c->handler, c->handler_cls,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

// One listening socket of a SO_REUSEPORT group: every worker gets a socket of its own and the
// kernel spreads new connections over them. (With one shared socket, whichever worker wakes
// first accepts a whole burst of connections, and the others may sit idle for their lifetime.)
// In C because it is five calls with socklen_t casts; returns the fd, or -1 with errno set.
static inline int mm_listen(const struct sockaddr *address, socklen_t length, int backlog) {
    int fd = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0
        || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0
        || (address->sa_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0)
        || bind(fd, address, length) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

// Whether `address` can be bound by a socket outside any SO_REUSEPORT group: SO_REUSEPORT
// would let a second server of the same user join our group (and take half our connections)
// instead of failing, so the group is only created on a port nobody listens on. 0 when free,
// else -1 with errno set (EADDRINUSE).
static inline int mm_port_free(const struct sockaddr *address, socklen_t length) {
    int fd = socket(address->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    int rc = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);   // TIME_WAIT is no conflict
    if (rc == 0 && address->sa_family == AF_INET6) rc = setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (rc == 0) rc = bind(fd, address, length);
    int saved = errno;
    close(fd);
    errno = saved;
    return rc == 0 ? 0 : -1;
}

// getsockname with the port in host order, for a group bound to port 0 (its first socket
// picks the port the others then bind).
static inline int mm_socket_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t length = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &length) != 0) return -1;
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

// MHD_get_daemon_info is variadic and returns a union.
static inline unsigned int mm_daemon_connections(struct MHD_Daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info ? info->num_connections : 0;
}

// MHD_get_connection_info is variadic and returns a union.
static inline int mm_connection_fd(struct MHD_Connection *c) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

// A true TCP RST: dissolve the socket's association (connect with AF_UNSPEC), so that when MHD
// closes it the peer sees a reset instead of a FIN (SO_LINGER {1,0} alone still gave a FIN).
static inline void mm_reset_socket(int fd) {
    struct sockaddr sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_family = AF_UNSPEC;
    (void)connect(fd, &sa, sizeof sa);
}

// MHD_SIZE_UNKNOWN is a macro over a 64-bit cast.
static inline uint64_t mm_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

// MHD_CONTENT_READER_END_WITH_ERROR / _END_OF_STREAM are macros over casts.
static inline ssize_t mm_reader_error(void) { return MHD_CONTENT_READER_END_WITH_ERROR; }
static inline ssize_t mm_reader_end(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

#endif
