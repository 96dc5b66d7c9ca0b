#ifndef MOONMOCK_CWATCHDOG_H
#define MOONMOCK_CWATCHDOG_H

// A watchdog for long calls into an interpreter, so that a short call pays nothing for being
// stoppable. Lua counts instructions with a hook that, once set, makes its VM stop at every
// instruction (a script runs about 2.5 times slower). Instead, each call marks its start and
// end in a slot; one thread per process looks at the slots every MM_WATCH_TICK_MS and, when a
// call has been running for a whole tick, signals the thread running it. The signal handler
// then arms the call's budget (for Lua: sets the count hook, which Lua allows from a signal
// handler), and the budget counts from there.
//
// The thread parks when no call has run for half a second, and the next call wakes it.
//
// Limits: a child of fork() that uses its VMs without exec has no watchdog thread (calls there
// are never armed); and a SIGURG handler the host installs after the first registration takes
// the signal from us (one installed before is seen, and the watchdog then declines).

#include <stdint.h>

/// Arms the budget of `state` (`count` instructions from now). Runs in a signal handler on the
/// thread running the call, so it must be async-signal-safe (lua_sethook is, by Lua's design).
typedef void (*mm_watch_arm_fn)(void *state, int count);

/// One VM's slot; opaque.
typedef struct mm_watch_slot mm_watch_slot;

/// Registers `state`, whose calls the watchdog may arm with `arm`. NULL when the watchdog
/// cannot run in this process (its signal has another handler, or no thread can start): the
/// caller then counts every instruction itself, as without a watchdog.
mm_watch_slot *mm_watch_register(void *state, mm_watch_arm_fn arm);

/// Removes the slot and frees it. No call may be in progress in it.
void mm_watch_unregister(mm_watch_slot *slot);

/// Marks the start of a call with a budget of `budget` instructions on this thread.
void mm_watch_begin(mm_watch_slot *slot, int budget);

/// Names the state the next calls in `slot` arm (a coroutine the call resumes; the slot's
/// own state again afterwards). Only the thread that uses the slot calls this.
void mm_watch_target(mm_watch_slot *slot, void *state);

/// Marks the end of the call. The call's budget may have been armed (even just after the call
/// ended): the caller disarms it afterwards.
void mm_watch_end(mm_watch_slot *slot);

/// How long a call runs before its budget starts to count, at most (two ticks), in milliseconds.
int mm_watch_grace_ms(void);

#endif
