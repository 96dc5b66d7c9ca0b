#ifndef MOONMOCK_CLUA_SHIM_H
#define MOONMOCK_CLUA_SHIM_H

// Debian's headers (pkg-config lua5.4); a vendored Lua's own headers come first (their guards).
#ifndef lua_h
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#endif
#include <stdlib.h>
#include <string.h>

// Everything here exists because Swift cannot import a C macro with arguments, a variadic
// function, or code that must raise a Lua error (longjmp) without Swift frames on the stack.

/// Small blocks (up to MM_POOL_MAX bytes) come from 64 KiB slabs with one free list per
/// 16-byte size class: a VM's objects stay packed together instead of spread over the process
/// heap (and over glibc's per-thread arenas, as requests run on whatever thread is free), which
/// is what a request served with cold caches pays for. Lua passes the old size on free and
/// realloc, so blocks need no header.
#define MM_POOL_MAX 512
#define MM_POOL_CLASSES (MM_POOL_MAX / 16)
#define MM_POOL_SLAB (64 * 1024)

/// Accounting for one VM's heap: what it uses, its ceiling, and whether the ceiling is enforced.
/// `enforcing` is cleared while host (Swift) code runs so that an allocation made by Swift
/// never fails and never longjmps; the trampoline checks the ceiling when Swift returns.
typedef struct mm_alloc_state {
    size_t used;
    size_t limit;      // 0 = no ceiling
    size_t peak;
    int enforcing;
    int over_limit;    // set when an allocation was refused, for a precise error message
    int budget_hit;    // set when the instruction budget ran out
    int budget;        // the instruction budget of the call in progress (0: none)
    long long budget_left;   // what is left of it, counted by the hook
    void *free_lists[MM_POOL_CLASSES];
    void *slabs;       // singly linked through each slab's first word
    char *bump;        // the unused tail of the newest slab
    size_t bump_left;
} mm_alloc_state;

// Swift cannot zero-initialise a struct holding a C array without naming every element.
static inline mm_alloc_state *mm_alloc_state_create(void) {
    return (mm_alloc_state *)calloc(1, sizeof(mm_alloc_state));
}

// Frees the slabs; call after lua_close, when no block is in use any more.
static inline void mm_alloc_state_destroy(mm_alloc_state *s) {
    while (s->slabs) {
        void *next = *(void **)s->slabs;
        free(s->slabs);
        s->slabs = next;
    }
    free(s);
}

// A block of size class `c` (bytes (c + 1) * 16) from the free list or the newest slab.
static inline void *mm_pool_take(mm_alloc_state *s, size_t c) {
    void *p = s->free_lists[c];
    if (p) {
        s->free_lists[c] = *(void **)p;
        return p;
    }
    size_t size = (c + 1) * 16;
    if (s->bump_left < size) {
        char *slab = (char *)malloc(MM_POOL_SLAB);
        if (slab == NULL) return NULL;
        *(void **)slab = s->slabs;
        s->slabs = slab;
        s->bump = slab + 16;   // the link word, padded to keep 16-byte alignment
        s->bump_left = MM_POOL_SLAB - 16;
    }
    p = s->bump;
    s->bump += size;
    s->bump_left -= size;
    return p;
}

static inline void mm_pool_give(mm_alloc_state *s, void *p, size_t c) {
    *(void **)p = s->free_lists[c];
    s->free_lists[c] = p;
}

// The raw allocation without accounting: pool for small blocks, malloc for the rest.
static inline void *mm_heap_resize(mm_alloc_state *s, void *ptr, size_t old, size_t nsize) {
    int small_old = ptr != NULL && old <= MM_POOL_MAX;
    if (nsize == 0) {
        if (small_old) mm_pool_give(s, ptr, (old - 1) / 16);
        else free(ptr);
        return NULL;
    }
    if (nsize <= MM_POOL_MAX) {
        size_t c = (nsize - 1) / 16;
        if (small_old && (old - 1) / 16 == c) return ptr;
        void *p = mm_pool_take(s, c);
        if (p == NULL) return NULL;
        if (ptr) {
            memcpy(p, ptr, old < nsize ? old : nsize);
            if (small_old) mm_pool_give(s, ptr, (old - 1) / 16);
            else free(ptr);
        }
        return p;
    }
    if (ptr == NULL || !small_old) return realloc(ptr, nsize);
    void *p = malloc(nsize);
    if (p == NULL) return NULL;
    memcpy(p, ptr, old);
    mm_pool_give(s, ptr, (old - 1) / 16);
    return p;
}

/// A host function: returns the number of results, or -1 with an error message on top of the stack.
typedef int (*mm_host_fn)(lua_State *L);

// The allocator contract of lua_Alloc (manual §4.4): free on nsize == 0, never fail a shrink,
// and `osize` is a type tag (not a size) when ptr is NULL.
// Everything but the two common cases of mm_alloc (below), out of line.
__attribute__((noinline)) static inline void *mm_alloc_general(mm_alloc_state *s, void *ptr, size_t osize, size_t nsize) {
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        mm_heap_resize(s, ptr, old, 0);
        s->used -= old;
        return NULL;
    }
    if (nsize > old && s->enforcing && s->limit && s->used - old + nsize > s->limit) {
        s->over_limit = 1;
        return NULL;
    }
    void *p = mm_heap_resize(s, ptr, old, nsize);
    // A shrink that found no memory keeps the old block: it is big enough for the new size and
    // for the size class it is later freed into (a malloc'd block freed into a class stays
    // in the pool until the VM closes).
    if (p == NULL) return nsize <= old ? ptr : NULL;
    s->used = s->used - old + nsize;
    if (s->used > s->peak) s->peak = s->used;
    return p;
}

// The allocator Lua calls, a few hundred thousand times a second under load: a new small block
// from its free list and a small block freed onto one take the short paths here; the rest
// (growth, large blocks, a refused allocation) goes to mm_alloc_general.
static inline void *mm_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    mm_alloc_state *s = (mm_alloc_state *)ud;
    if (nsize == 0) {
        // Lua frees empty parts as NULL (a dozen times in a typical request): nothing to do.
        if (ptr == NULL) return NULL;
        if (osize <= MM_POOL_MAX) {
            mm_pool_give(s, ptr, (osize - 1) / 16);
            s->used -= osize;
            return NULL;
        }
    } else if (ptr == NULL && nsize <= MM_POOL_MAX) {
        void **list = &s->free_lists[(nsize - 1) / 16];
        void *p = *list;
        size_t used = s->used + nsize;
        if (p != NULL && !(s->enforcing && s->limit && used > s->limit)) {
            *list = *(void **)p;
            s->used = used;
            if (used > s->peak) s->peak = used;
            return p;
        }
    }
    return mm_alloc_general(s, ptr, osize, nsize);
}

// lua_newstate takes a function pointer; this passes our allocator without a Swift closure.
static inline lua_State *mm_newstate(mm_alloc_state *state) {
    return lua_newstate(mm_alloc, state);
}

// lua_getextraspace is a macro; the VM keeps a pointer to its Swift owner there.
static inline void **mm_extraspace(lua_State *L) {
    return (void **)lua_getextraspace(L);
}

// The trampoline every Swift function exposed to Lua goes through: upvalue 1 is the Swift
// dispatcher, upvalue 2 its index. Swift reports errors by returning -1; the longjmp of
// lua_error then happens here, in C, after every Swift frame has returned.
static inline int mm_trampoline(lua_State *L) {
    mm_host_fn fn = (mm_host_fn)lua_touserdata(L, lua_upvalueindex(1));
    void *ud = NULL;
    lua_getallocf(L, &ud);
    mm_alloc_state *s = (mm_alloc_state *)ud;
    int was_enforcing = s->enforcing;
    s->enforcing = 0;
    int n = fn(L);
    s->enforcing = was_enforcing;
    if (n < 0) return lua_error(L);
    if (was_enforcing && s->limit && s->used > s->limit) {
        s->over_limit = 1;
        lua_pushliteral(L, "memory limit exceeded");
        return lua_error(L);
    }
    return n;
}

// Lets Swift push the trampoline as a closure over (dispatcher, index) without casting
// a C function pointer to a data pointer on the Swift side.
static inline void mm_push_host_function(lua_State *L, mm_host_fn dispatcher, lua_Integer index) {
    lua_pushlightuserdata(L, (void *)dispatcher);
    lua_pushinteger(L, index);
    lua_pushcclosure(L, mm_trampoline, 2);
}

// Message handler for lua_pcall: appends a traceback (luaL_traceback may allocate, which is
// fine here because we are in C and inside the protected call).
static inline int mm_traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

// The instruction budget of a call is shared by the states it runs in (its main state and any
// coroutines): each hooked state calls the hook every MM_BUDGET_PERIOD instructions, and the
// hook takes that many from the call's budget. Once the budget is gone, the hook raises an
// error at every instruction of every hooked state, and arms the main state likewise, so a
// script that catches the error (pcall, coroutine.resume) cannot keep running.
#define MM_BUDGET_PERIOD 1000

static inline void mm_budget_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    void *ud = NULL;
    lua_getallocf(L, &ud);
    mm_alloc_state *s = (mm_alloc_state *)ud;
    if (s->budget == 0) {   // a coroutine counted in an earlier call, resumed in one without a budget
        lua_sethook(L, NULL, 0, 0);
        return;
    }
    if (!s->budget_hit) {
        int period = lua_gethookcount(L);
        s->budget_left -= period;
        if (s->budget_left > 0) {
            if (period != MM_BUDGET_PERIOD) lua_sethook(L, mm_budget_hook, LUA_MASKCOUNT, MM_BUDGET_PERIOD);
            return;
        }
        s->budget_hit = 1;
        lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
        lua_State *main = lua_tothread(L, -1);
        lua_pop(L, 1);
        if (main != NULL && main != L) lua_sethook(main, mm_budget_hook, LUA_MASKCOUNT, 1);
    }
    lua_sethook(L, mm_budget_hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "instruction budget exceeded (runaway script stopped)");
}

// Starts a call's budget of `count` instructions (0: none) in the allocator state.
static inline void mm_budget_start(mm_alloc_state *s, int count) {
    s->budget = count;
    s->budget_left = count;
    s->budget_hit = 0;
}

// Counts L's instructions against the budget (count > 0), or stops counting them (count 0).
static inline void mm_set_budget(lua_State *L, int count) {
    if (count > 0) lua_sethook(L, mm_budget_hook, LUA_MASKCOUNT, count < MM_BUDGET_PERIOD ? count : MM_BUDGET_PERIOD);
    else lua_sethook(L, NULL, 0, 0);
}

// The watchdog's arming callback (CWatchdog), in its signal handler: a C function pointer
// with an untyped state, and lua_sethook is safe to call from a signal handler. The budget
// counts from here (its start was uncounted).
static void mm_budget_arm(void *L, int count) { mm_set_budget((lua_State *)L, count); }

// coroutine.create and coroutine.wrap, each over the original (upvalue 1). A coroutine is a
// Lua state of its own, which the watchdog cannot arm (it arms the state the call started
// in), so a coroutine made during a call with a budget is counted from its first
// instruction. One made while the creating state is counted is already (lua_newthread copies
// the hook); one kept from an earlier call counts against the budget of the call resuming it.
static inline int mm_coroutine_counted(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 1, 1);
    lua_State *co = lua_tothread(L, -1);
    if (co == NULL && lua_getupvalue(L, -1, 1) != NULL) {   // wrap's function holds its state
        co = lua_tothread(L, -1);
        lua_pop(L, 1);
    }
    void *ud = NULL;
    lua_getallocf(L, &ud);
    int budget = ((mm_alloc_state *)ud)->budget;
    if (co != NULL && budget > 0 && lua_gethookmask(co) == 0) mm_set_budget(co, budget);
    return 1;
}

// Puts mm_coroutine_counted in front of coroutine.create and coroutine.wrap.
static inline void mm_count_coroutines(lua_State *L) {
    static const char *const names[] = { "create", "wrap" };
    if (lua_getglobal(L, "coroutine") == LUA_TTABLE) {
        for (int i = 0; i < 2; i++) {
            lua_getfield(L, -1, names[i]);
            lua_pushcclosure(L, mm_coroutine_counted, 1);
            lua_setfield(L, -2, names[i]);
        }
    }
    lua_pop(L, 1);
}

// Handlers run as coroutines (they may wait: mock.fetch, mock.sleep). lua_resume's result
// count is an out parameter; the thread's status after an error is kept for the traceback.
static inline int mm_resume(lua_State *co, lua_State *from, int nargs, int *nresults) {
    return lua_resume(co, from, nargs, nresults);
}

// The traceback of a coroutine that failed (its stack is as it was when the error was raised),
// made inside a protected call on L: luaL_traceback may allocate, and a memory error must not
// longjmp out of an unprotected frame. Leaves "message\nstack traceback:..." on L's stack.
static inline int mm_coroutine_traceback_run(lua_State *L) {
    lua_State *co = lua_tothread(L, 1);
    const char *msg = lua_tostring(L, 2);
    luaL_traceback(L, co, msg, 0);
    return 1;
}
static inline int mm_coroutine_traceback(lua_State *L, lua_State *co) {
    const char *msg = lua_tostring(co, -1);
    lua_pushcfunction(L, mm_coroutine_traceback_run);
    lua_pushthread(co);
    lua_xmove(co, L, 1);
    if (msg != NULL) lua_pushstring(L, msg);
    else lua_pushfstring(L, "(error object is a %s value)", luaL_typename(co, -1));
    return lua_pcall(L, 2, 1, 0);
}

// lua_pcall is a macro over lua_pcallk.
static inline int mm_pcall(lua_State *L, int nargs, int nresults, int msgh) {
    return lua_pcall(L, nargs, nresults, msgh);
}

// lua_pop is a macro.
static inline void mm_pop(lua_State *L, int n) { lua_pop(L, n); }

// lua_newtable is a macro.
static inline void mm_newtable(lua_State *L) { lua_newtable(L); }

// lua_tostring / lua_tonumber / lua_tointeger are macros over the *x forms.
static inline int mm_isnil(lua_State *L, int idx) { return lua_isnil(L, idx); }

// lua_upvalueindex is a macro.
static inline int mm_upvalueindex(int i) { return lua_upvalueindex(i); }

// LUA_REGISTRYINDEX expands to an expression Swift does not import.
static inline int mm_registryindex(void) { return LUA_REGISTRYINDEX; }

// luaL_loadbuffer is a macro; mode "t" refuses binary chunks.
static inline int mm_loadtext(lua_State *L, const char *buf, size_t len, const char *name) {
    return luaL_loadbufferx(L, buf, len, name, "t");
}

// lua_gc is variadic.
static inline int mm_gc_collect(lua_State *L) { return lua_gc(L, LUA_GCCOLLECT); }

// lua_gc is variadic; LUA_GCGEN switches to generational mode, which suits short handler calls.
static inline void mm_gc_generational(lua_State *L) { (void)lua_gc(L, LUA_GCGEN, 0, 0); }

// lua_insert / lua_remove are macros over lua_rotate.
static inline void mm_insert(lua_State *L, int idx) { lua_insert(L, idx); }
static inline void mm_remove(lua_State *L, int idx) { lua_remove(L, idx); }

// luaL_openlibs plus removal of string.dump happen in one place so no window exists.
static inline void mm_openlibs(lua_State *L) { luaL_openlibs(L); }

// LUA_RELEASE is built by macro concatenation, which Swift does not import.
static inline const char *mm_release(void) { return LUA_RELEASE; }

#include "json.h"
#include "pattern.h"

#endif
