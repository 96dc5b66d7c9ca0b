#ifndef MOONMOCK_CLINUXIO_SHIM_H
#define MOONMOCK_CLINUXIO_SHIM_H

// Linux headers Swift's Glibc module does not bring in, for the server's own HTTP/1.1 layer.
// epoll_event, eventfd and the TCP options import as they are.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <errno.h>
#include <sys/ioctl.h>
#include <malloc.h>
#include <linux/sockios.h>

#include <spawn.h>

// GNU extensions of posix_spawn, declared only under _GNU_SOURCE (see accept4 below): the tests'
// Subprocess starts children with no descriptor but 0-2 and in a folder of their choosing.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

// accept4 is declared only under _GNU_SOURCE, which the Glibc module is built without; one
// prototype lets an accepted socket be non-blocking and close-on-exec in the same call.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

// glibc's send and recv are cancellation points: in a process with threads each call switches
// asynchronous cancellation on and off around the system call. The server never cancels a
// thread, so its loop makes the two calls it makes per request directly (-1 and errno as usual).
static inline ssize_t mm_io_send(int fd, const void *bytes, size_t count, int flags) {
    return syscall(SYS_sendto, fd, bytes, count, flags, (void *)0, 0);
}

// Same as mm_io_send, for recv (recvfrom without an address).
static inline ssize_t mm_io_recv(int fd, void *bytes, size_t count, int flags) {
    return syscall(SYS_recvfrom, fd, bytes, count, flags, (void *)0, (void *)0);
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

// Bytes the socket has not yet had acknowledged by the peer (SIOCOUTQ): a slow reader that drains
// the kernel's queue is making progress even while the server has had no room to write.
// -1 when it cannot be read.
static inline int mm_unsent_bytes(int fd) {
    int n = 0;
    return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : -1;
}

/// glibc's malloc_trim (malloc.h, which Swift's Glibc module leaves out): freed heap memory
/// back to the system.
static inline int mm_malloc_trim(void) { return malloc_trim(0); }

#endif
