#ifndef MOONMOCK_CLINUXIO_SHIM_H
#define MOONMOCK_CLINUXIO_SHIM_H

// Linux headers Swift's Glibc module does not bring in, for the server's own HTTP/1.1 layer.
// No wrappers: epoll_event, eventfd and the TCP options import as they are.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/tcp.h>

// accept4 is declared only under _GNU_SOURCE, which the Glibc module is built without; one
// prototype lets an accepted socket be non-blocking and close-on-exec in the same call.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

#endif
