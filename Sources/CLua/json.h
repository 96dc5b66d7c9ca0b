#ifndef MOONMOCK_CLUA_JSON_H
#define MOONMOCK_CLUA_JSON_H

#ifndef lua_h   // Debian's headers unless a vendored Lua's came first
#include <lua.h>
#include <lauxlib.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
// mm_skim_stop: the scan of string text that the operation-name check uses too (one copy).
#include "../CJSONSkim/CJSONSkim.h"

// The common case of encoding a handler's result as JSON, in C: walking a Lua table from Swift
// costs a retain, a release and a uniqueness check per byte appended. This encoder covers the
// values whose JSON has exactly one spelling — null, booleans, integers, strings of printable
// ASCII, arrays and objects of those — and answers MM_JSON_FALLBACK for anything else (floats,
// escapes, non-ASCII text, sparse or mixed keys, errors), which the Swift encoder then handles,
// so that the output and the error messages stay the Swift encoder's. It never raises a Lua
// error (no longjmp can cross Swift frames) and leaves the stack as it found it.

#define MM_JSON_OK 0
#define MM_JSON_FALLBACK 1
#define MM_JSON_NOMEM 2
#define MM_JSON_MAX_DEPTH 128

/// A growable byte buffer owned by one VM (reused from request to request).
typedef struct mm_buf {
    char *data;
    size_t len;
    size_t cap;
} mm_buf;

/// Grows the buffer for `n` more bytes; 0 when memory is exhausted. Kept out of line, so
/// that the check in front of every write stays small enough to inline.
__attribute__((noinline)) static inline int mm_buf_grow(mm_buf *b, size_t n) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    char *data = (char *)realloc(b->data, cap);
    if (data == NULL) return 0;
    b->data = data;
    b->cap = cap;
    return 1;
}

/// Makes room for `n` more bytes; 0 when memory is exhausted. Always inlined, as is
/// `mm_buf_put`: the encoder writes a byte or a few at a time, and a call costs more than that.
__attribute__((always_inline)) static inline int mm_buf_reserve(mm_buf *b, size_t n) {
    return b->len + n <= b->cap ? 1 : mm_buf_grow(b, n);
}

/// Frees the buffer's memory.
static inline void mm_buf_free(mm_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/// Empties the buffer, giving back memory beyond 64 KiB (one large response must not pin it).
static inline void mm_buf_reset(mm_buf *b) {
    b->len = 0;
    if (b->cap > 64 * 1024) mm_buf_free(b);
}

/// Appends `n` bytes; 0 when memory is exhausted.
__attribute__((always_inline)) static inline int mm_buf_put(mm_buf *b, const char *s, size_t n) {
    if (!mm_buf_reserve(b, n)) return 0;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    return 1;
}

static inline int mm_json_int(mm_buf *b, lua_Integer v) {
    char digits[24];
    int n = 0;
    // Unsigned arithmetic, so that math.mininteger needs no special case.
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do { digits[n++] = (char)('0' + u % 10); u /= 10; } while (u != 0);
    if (v < 0) digits[n++] = '-';
    if (!mm_buf_reserve(b, (size_t)n)) return 0;
    while (n > 0) b->data[b->len++] = digits[--n];
    return 1;
}

/// A string is taken when every byte is printable ASCII other than `"` and `\`.
static inline int mm_json_plain(const char *s, size_t n) {
    size_t i = 0;
    // Eight bytes at a time while no byte is flagged; a flagged word is decided byte by byte.
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if ((w & 0x8080808080808080ULL) || mm_skim_word_stops(w)) break;
    }
    for (; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') return 0;
    }
    return 1;
}

static inline int mm_json_string(mm_buf *b, const char *s, size_t n) {
    if (!mm_buf_reserve(b, n + 2)) return MM_JSON_NOMEM;
    b->data[b->len++] = '"';
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len++] = '"';
    return MM_JSON_OK;
}

/// A string key of an object being encoded.
typedef struct mm_json_key {
    const char *p;
    size_t n;
    int slot;
} mm_json_key;

/// Bytewise order, a prefix first (Swift's `lexicographicallyPrecedes` on UTF-8).
static int mm_json_key_cmp(const void *a, const void *b) {
    const mm_json_key *x = (const mm_json_key *)a, *y = (const mm_json_key *)b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    if (c != 0) return c;
    return x->n < y->n ? -1 : (x->n > y->n ? 1 : 0);
}

static int mm_json_value(lua_State *L, int i, int resp_ref, int array_ref, mm_buf *b, int depth);

static int mm_json_array(lua_State *L, int t, lua_Integer count, int resp_ref, int array_ref, mm_buf *b, int depth) {
    if (!mm_buf_put(b, "[", 1)) return MM_JSON_NOMEM;
    for (lua_Integer k = 1; k <= count; k++) {
        if (k > 1 && !mm_buf_put(b, ",", 1)) return MM_JSON_NOMEM;
        lua_rawgeti(L, t, k);
        int rc = mm_json_value(L, lua_gettop(L), resp_ref, array_ref, b, depth + 1);
        lua_pop(L, 1);
        if (rc != MM_JSON_OK) return rc;
    }
    return mm_buf_put(b, "]", 1) ? MM_JSON_OK : MM_JSON_NOMEM;
}

static int mm_json_table(lua_State *L, int t, int resp_ref, int array_ref, mm_buf *b, int depth) {
    if (depth >= MM_JSON_MAX_DEPTH || !lua_checkstack(L, 4)) return MM_JSON_FALLBACK;
    // One metatable read for both checks (most tables have none): a response value falls
    // back to Swift, a table marked as an array is one.
    if (lua_getmetatable(L, t)) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, resp_ref);
        int response = lua_rawequal(L, -1, -2);
        lua_pop(L, 1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, array_ref);
        int array = lua_rawequal(L, -1, -2);
        lua_pop(L, 2);
        if (response) return MM_JSON_FALLBACK;
        if (array) return mm_json_array(L, t, (lua_Integer)lua_rawlen(L, t), resp_ref, array_ref, b, depth);
    }

    // Copy every key and its value onto the stack (the key copy drives lua_next): encoding then
    // reads the values from the stack instead of looking each one up again.
    int base = lua_gettop(L);
    int count = 0, strings = 0;
    lua_Integer low = 0, high = 0;
    lua_pushnil(L);
    while (lua_next(L, t) != 0) {
        int type = lua_type(L, -2);
        if (type == LUA_TSTRING) {
            strings++;
        } else if (type == LUA_TNUMBER && lua_isinteger(L, -2)) {
            lua_Integer k = lua_tointeger(L, -2);
            if (count - strings == 0 || k < low) low = k;
            if (count - strings == 0 || k > high) high = k;
        } else {
            lua_settop(L, base);
            return MM_JSON_FALLBACK;   // boolean, float or other keys: the Swift encoder explains
        }
        // Room for the next eight keys and values (and lua_next's own slot) at a time.
        if (count % 8 == 0 && !lua_checkstack(L, 2 * 8 + 3)) { lua_settop(L, base); return MM_JSON_FALLBACK; }
        count++;
        lua_pushvalue(L, -2);   // key, value, key: the last drives lua_next
    }
    int rc = MM_JSON_OK;
    if (count == 0) {
        rc = mm_buf_put(b, "{}", 2) ? MM_JSON_OK : MM_JSON_NOMEM;
    } else if (strings == 0) {
        // Integer keys only: distinct, so 1...count exactly when the smallest is 1 and the
        // largest is count. Sparse tables become objects with string keys: the Swift encoder's.
        if (low == 1 && high == (lua_Integer)count) rc = mm_json_array(L, t, count, resp_ref, array_ref, b, depth);
        else rc = MM_JSON_FALLBACK;
    } else if (strings != count) {
        rc = MM_JSON_FALLBACK;   // mixed keys
    } else {
        mm_json_key small[32];
        mm_json_key *keys = count <= 32 ? small : (mm_json_key *)malloc(sizeof(mm_json_key) * (size_t)count);
        if (keys == NULL) { lua_settop(L, base); return MM_JSON_NOMEM; }
        for (int n = 0; n < count; n++) {
            keys[n].slot = base + 1 + 2 * n;   // the key; its value is the slot after
            keys[n].p = lua_tolstring(L, keys[n].slot, &keys[n].n);
            if (!mm_json_plain(keys[n].p, keys[n].n)) rc = MM_JSON_FALLBACK;
        }
        if (rc == MM_JSON_OK) {
            if (count <= 16) {
                // Insertion sort: objects are mostly small, and qsort's setup costs more.
                for (int i = 1; i < count; i++) {
                    mm_json_key key = keys[i];
                    int j = i;
                    while (j > 0 && mm_json_key_cmp(&key, &keys[j - 1]) < 0) { keys[j] = keys[j - 1]; j--; }
                    keys[j] = key;
                }
            } else {
                qsort(keys, (size_t)count, sizeof(mm_json_key), mm_json_key_cmp);
            }
            if (!mm_buf_put(b, "{", 1)) rc = MM_JSON_NOMEM;
            for (int n = 0; n < count && rc == MM_JSON_OK; n++) {
                // `,"key":` with one check for room (the key is plain: no escapes).
                size_t kn = keys[n].n;
                if (!mm_buf_reserve(b, kn + 4)) { rc = MM_JSON_NOMEM; break; }
                char *o = b->data + b->len;
                if (n > 0) *o++ = ',';
                *o++ = '"';
                memcpy(o, keys[n].p, kn);
                o += kn;
                *o++ = '"';
                *o++ = ':';
                b->len = (size_t)(o - b->data);
                rc = mm_json_value(L, keys[n].slot + 1, resp_ref, array_ref, b, depth + 1);
            }
            if (rc == MM_JSON_OK && !mm_buf_put(b, "}", 1)) rc = MM_JSON_NOMEM;
        }
        if (keys != small) free(keys);
    }
    lua_settop(L, base);
    return rc;
}

static int mm_json_value(lua_State *L, int i, int resp_ref, int array_ref, mm_buf *b, int depth) {
    switch (lua_type(L, i)) {
    case LUA_TNIL:
    case LUA_TNONE:
        return mm_buf_put(b, "null", 4) ? MM_JSON_OK : MM_JSON_NOMEM;
    case LUA_TLIGHTUSERDATA:
        if (lua_touserdata(L, i) != NULL) return MM_JSON_FALLBACK;
        return mm_buf_put(b, "null", 4) ? MM_JSON_OK : MM_JSON_NOMEM;   // mock.null
    case LUA_TBOOLEAN:
        return (lua_toboolean(L, i) ? mm_buf_put(b, "true", 4) : mm_buf_put(b, "false", 5)) ? MM_JSON_OK : MM_JSON_NOMEM;
    case LUA_TNUMBER:
        if (!lua_isinteger(L, i)) return MM_JSON_FALLBACK;   // floats: Swift's shortest round-trip form
        return mm_json_int(b, lua_tointeger(L, i)) ? MM_JSON_OK : MM_JSON_NOMEM;
    case LUA_TSTRING: {
        size_t n;
        const char *s = lua_tolstring(L, i, &n);
        if (!mm_json_plain(s, n)) return MM_JSON_FALLBACK;
        return mm_json_string(b, s, n);
    }
    case LUA_TTABLE:
        return mm_json_table(L, i, resp_ref, array_ref, b, depth);
    default:
        return MM_JSON_FALLBACK;
    }
}

/// Encodes the value at `idx` into `b` (emptied first). MM_JSON_FALLBACK: use the Swift encoder.
static inline int mm_json_encode(lua_State *L, int idx, int resp_ref, int array_ref, mm_buf *b) {
    mm_buf_reset(b);
    int top = lua_gettop(L);
    int rc = mm_json_value(L, lua_absindex(L, idx), resp_ref, array_ref, b, 0);
    lua_settop(L, top);
    return rc;
}

// The decoder lives in json_decode.h.
#include "json_decode.h"

#endif
