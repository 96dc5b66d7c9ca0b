#ifndef MOONMOCK_CHIREDIS_SHIM_H
#define MOONMOCK_CHIREDIS_SHIM_H

// hiredis for `moonmock serve --store redis://`: the blocking context API with timeouts, used
// one connection per thread at a time (MoonmockRedis's RedisConnection), and pipelining
// through redisAppendCommandArgv / redisGetReply.
#include <hiredis/hiredis.h>
#include <sys/time.h>
#include <fcntl.h>
#include <hiredis/sds.h>

// struct timeval from milliseconds: Swift builds it awkwardly across C libraries.
static inline struct timeval mm_redis_timeval(int milliseconds) {
    struct timeval tv;
    tv.tv_sec = milliseconds / 1000;
    tv.tv_usec = (milliseconds % 1000) * 1000;
    return tv;
}

// A connection with both the connect and the read/write timeout set, or NULL when out of memory.
static inline redisContext *mm_redis_connect(const char *host, int port, int milliseconds) {
    redisContext *c = redisConnectWithTimeout(host, port, mm_redis_timeval(milliseconds));
    if (c != NULL && c->err == 0) redisSetTimeout(c, mm_redis_timeval(milliseconds));
    return c;
}

// The context's error text (a fixed array in the struct, which Swift sees as a tuple).
static inline const char *mm_redis_errstr(const redisContext *c) { return c->errstr; }

// An event loop's connection (MoonmockRedis's RedisChannel): made blocking with the timeouts
// (connect, AUTH, SELECT), then switched to non-blocking so that redisBufferWrite and
// redisBufferRead return at once (0 bytes on EAGAIN). Returns the descriptor.
static inline int mm_redis_make_nonblocking(redisContext *c) {
    c->flags &= ~REDIS_BLOCK;
    int flags = fcntl(c->fd, F_GETFL);
    fcntl(c->fd, F_SETFL, flags | O_NONBLOCK);
    return c->fd;
}

// Whether the context's output buffer still holds bytes to write.
static inline int mm_redis_has_output(const redisContext *c) { return c->obuf != NULL && sdslen(c->obuf) > 0; }

// The i-th element of an array reply.
static inline redisReply *mm_redis_element(const redisReply *r, size_t i) { return r->element[i]; }

#endif
