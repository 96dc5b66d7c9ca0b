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

#endif
