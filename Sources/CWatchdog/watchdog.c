#define _GNU_SOURCE
#include "CWatchdog.h"

#if defined(__linux__)

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

// SIGURG: ignored by default, so a signal that arrives after someone replaced our handler
// with the default cannot end the process; and no one sends it to a thread that has no
// out-of-band socket data to read.
#define MM_WATCH_SIGNAL SIGURG
#define MM_WATCH_TICK_MS 10
#define MM_WATCH_IDLE_TICKS 50

struct mm_watch_slot {
    _Atomic uint64_t serial;        // odd while a call runs
    _Atomic pid_t tid;              // the thread running the call (stored before serial turns odd)
    void *state;
    mm_watch_arm_fn arm;
    int budget;
    mm_watch_slot *outer;           // the call this one runs inside, on the same thread
    // The watchdog's own, under the lock:
    uint64_t seen;                  // serial at the last tick
    uint64_t signalled;             // the serial last signalled (once per call)
    mm_watch_slot *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static mm_watch_slot *slots;
static _Atomic int parked;
static int status;                  // 0: not started, 1: running, -1: cannot run here

// Initial-exec: reading them in the signal handler must not allocate.
static __thread mm_watch_slot *current __attribute__((tls_model("initial-exec")));
static __thread pid_t thread_id __attribute__((tls_model("initial-exec")));

static void on_signal(int sig) {
    (void)sig;
    int saved = errno;
    mm_watch_slot *s = current;
    if (s != NULL) s->arm(s->state, s->budget);
    errno = saved;
}

static void *watch(void *unused) {
    (void)unused;
    int idle = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += MM_WATCH_TICK_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) { until.tv_sec += 1; until.tv_nsec -= 1000000000L; }
        while (pthread_cond_timedwait(&wake, &lock, &until) == 0) {}   // until the tick
        int busy = 0;
        for (mm_watch_slot *s = slots; s != NULL; s = s->next) {
            uint64_t serial = atomic_load(&s->serial);
            if (serial & 1) {
                busy = 1;
                // The same call as a tick ago: it has run for a tick at least.
                if (serial == s->seen && serial != s->signalled) {
                    s->signalled = serial;
                    syscall(SYS_tgkill, getpid(), atomic_load_explicit(&s->tid, memory_order_relaxed), MM_WATCH_SIGNAL);
                }
            }
            s->seen = serial;
        }
        if (busy) { idle = 0; continue; }
        if (++idle < MM_WATCH_IDLE_TICKS) continue;
        // Park. A call that starts from here on either sees `parked` and wakes us, or its odd
        // serial is seen below (both sides are sequentially consistent).
        atomic_store(&parked, 1);
        for (mm_watch_slot *s = slots; s != NULL; s = s->next) busy |= (int)(atomic_load(&s->serial) & 1);
        if (busy) atomic_store(&parked, 0);
        while (atomic_load(&parked)) pthread_cond_wait(&wake, &lock);
        idle = 0;
    }
    return NULL;
}

// Under the lock. Installs the handler and starts the thread; 0 when either cannot be done.
static int start(void) {
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
    // ThreadSanitizer holds a signal back until its thread next enters libc, which a Lua loop
    // may never do: a sanitized build counts every call from its first instruction instead.
    return 0;
#endif
#endif
    struct sigaction old;
    if (sigaction(MM_WATCH_SIGNAL, NULL, &old) != 0) return 0;
    if ((old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != NULL : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) return 0;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &attr);
    pthread_condattr_destroy(&attr);
    struct sigaction sa;
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(MM_WATCH_SIGNAL, &sa, NULL) != 0) return 0;
    // The watchdog takes no signals (it inherits this mask): a process-wide one such as SIGINT
    // must go to a thread that handles it.
    sigset_t all, mask;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &mask);
    pthread_attr_t thread_attr;
    pthread_attr_init(&thread_attr);
    pthread_attr_setdetachstate(&thread_attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&thread_attr, 64 * 1024);
    pthread_t thread;
    int created = pthread_create(&thread, &thread_attr, watch, NULL) == 0;
    pthread_attr_destroy(&thread_attr);
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    if (!created) sigaction(MM_WATCH_SIGNAL, &old, NULL);
    return created;
}

mm_watch_slot *mm_watch_register(void *state, mm_watch_arm_fn arm) {
    pthread_mutex_lock(&lock);
    if (status == 0) status = start() ? 1 : -1;
    mm_watch_slot *s = status > 0 ? calloc(1, sizeof *s) : NULL;
    if (s != NULL) {
        s->state = state;
        s->arm = arm;
        s->next = slots;
        slots = s;
    }
    pthread_mutex_unlock(&lock);
    return s;
}

void mm_watch_unregister(mm_watch_slot *slot) {
    pthread_mutex_lock(&lock);
    for (mm_watch_slot **p = &slots; *p != NULL; p = &(*p)->next) {
        if (*p == slot) { *p = slot->next; break; }
    }
    pthread_mutex_unlock(&lock);
    free(slot);
}

// Out of line: wakes the parked watchdog (once per idle spell).
__attribute__((noinline)) static void wake_watchdog(void) {
    pthread_mutex_lock(&lock);
    if (atomic_load(&parked)) {
        atomic_store(&parked, 0);
        pthread_cond_signal(&wake);
    }
    pthread_mutex_unlock(&lock);
}

// Once per thread: its id for tgkill, and the signal unblocked (libdispatch's worker threads
// start with most signals blocked).
__attribute__((noinline)) static void prepare_thread(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, MM_WATCH_SIGNAL);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    thread_id = (pid_t)syscall(SYS_gettid);
}

void mm_watch_begin(mm_watch_slot *slot, int budget) {
    if (thread_id == 0) prepare_thread();
    slot->budget = budget;
    slot->outer = current;
    current = slot;
    atomic_store_explicit(&slot->tid, thread_id, memory_order_relaxed);
    atomic_fetch_add(&slot->serial, 1);   // odd; a full barrier before `parked` is read
    if (atomic_load(&parked)) wake_watchdog();
}

void mm_watch_end(mm_watch_slot *slot) {
    atomic_fetch_add_explicit(&slot->serial, 1, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    current = slot->outer;
}

void mm_watch_target(mm_watch_slot *slot, void *state) { slot->state = state; }

int mm_watch_grace_ms(void) { return 2 * MM_WATCH_TICK_MS; }

#else

// Elsewhere (no tgkill): no watchdog, and every call counts its instructions itself.
mm_watch_slot *mm_watch_register(void *state, mm_watch_arm_fn arm) { (void)state; (void)arm; return 0; }
void mm_watch_unregister(mm_watch_slot *slot) { (void)slot; }
void mm_watch_begin(mm_watch_slot *slot, int budget) { (void)slot; (void)budget; }
void mm_watch_end(mm_watch_slot *slot) { (void)slot; }
void mm_watch_target(mm_watch_slot *slot, void *state) { (void)slot; (void)state; }
int mm_watch_grace_ms(void) { return 0; }

#endif
