#ifndef MOONMOCK_CLUA_JSON_DECODE_H
#define MOONMOCK_CLUA_JSON_DECODE_H

// The decoder half of json.h (which includes this file after the encoder): its includes and
// the shared scan of string text come from there.

// ---------------------------------------------------------------------------------------------
// The common case of decoding a request body into Lua values, in C, with the same rule: the
// bodies whose decoding is unambiguous — strict JSON numbers, strings without \u escapes and
// with escapes only in ASCII text — are decoded here; anything else (and every invalid body)
// answers MM_JSON_FALLBACK with the stack as found, for the Swift decoder to decide.

/// Short strings the decoder pushed lately, keys above all: a body shaped like the last one
/// gets them from a table (one array read) instead of having Lua hash and intern each again.
/// One per VM; the Lua strings live in a table in the registry, slot k at index k + 1, and
/// `len[k]` and `text[k]` are the bytes the slot holds (compared before a slot is used).
#define MM_JSON_CACHE_SLOTS 64
#define MM_JSON_CACHE_BYTES 24   // at most 24: mm_json_same_short compares up to three words
/// Longer strings (a GraphQL query above all, sent alike with every request of an operation)
/// have slots of their own after those, at index MM_JSON_CACHE_SLOTS + k + 1, compared with the
/// Lua string they hold. A Lua string is immutable, so handing out the same one is invisible.
/// Up to MM_JSON_LONG_BYTES each, so the cache pins little memory.
#define MM_JSON_LONG_SLOTS 8
#define MM_JSON_LONG_BYTES 16384
#define MM_JSON_CACHE_TABLE_SIZE (MM_JSON_CACHE_SLOTS + MM_JSON_LONG_SLOTS)
typedef struct mm_json_strings {
    unsigned char len[MM_JSON_CACHE_SLOTS];   // 0: empty (the empty string is never cached)
    char text[MM_JSON_CACHE_SLOTS][MM_JSON_CACHE_BYTES];
} mm_json_strings;

typedef struct mm_json_reader {
    const unsigned char *s;
    size_t n;
    size_t i;
    int array_ref;
    mm_buf *scratch;
    mm_json_strings *strings;   // NULL: no cache
    int strings_index;          // the cache's table, on the stack
} mm_json_reader;

/// Whether the `n` bytes (1...MM_JSON_CACHE_BYTES) at `a` and `b` are the same: a few
/// overlapping loads in place of a call to memcmp, which costs more than the compare for a key
/// this short (every key and short value of every body is compared with its cache slot).
static inline int mm_json_same_short(const char *a, const char *b, size_t n) {
    if (n >= 8) {
        uint64_t x, y, xe, ye;
        memcpy(&x, a, 8); memcpy(&y, b, 8);
        memcpy(&xe, a + n - 8, 8); memcpy(&ye, b + n - 8, 8);
        if (((x ^ y) | (xe ^ ye)) != 0) return 0;
        if (n <= 16) return 1;
        memcpy(&x, a + 8, 8); memcpy(&y, b + 8, 8);   // bytes 8...15; the last load covered the rest
        return x == y;
    }
    if (n >= 4) {
        uint32_t x, y, xe, ye;
        memcpy(&x, a, 4); memcpy(&y, b, 4);
        memcpy(&xe, a + n - 4, 4); memcpy(&ye, b + n - 4, 4);
        return ((x ^ y) | (xe ^ ye)) == 0;
    }
    return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];   // 1...3 bytes
}

/// Pushes `n` bytes at `p` as a Lua string, from the cache when a slot holds these bytes.
/// Uses one stack slot beyond the string for a moment (to store a new one in the table).
static inline void mm_json_push_string(lua_State *L, mm_json_reader *r, const char *p, size_t n) {
    mm_json_strings *c = r->strings;
    if (c == NULL || n == 0 || n > MM_JSON_LONG_BYTES) { lua_pushlstring(L, p, n); return; }
    if (n > MM_JSON_CACHE_BYTES) {
        unsigned k = (unsigned)(n * 7u + (unsigned char)p[n / 2] * 3u + (unsigned char)p[n - 1]) & (MM_JSON_LONG_SLOTS - 1);
        lua_Integer slot = MM_JSON_CACHE_SLOTS + (lua_Integer)k + 1;
        size_t held = 0;
        const char *text = lua_rawgeti(L, r->strings_index, slot) == LUA_TSTRING ? lua_tolstring(L, -1, &held) : NULL;
        if (text != NULL && held == n && memcmp(text, p, n) == 0) return;
        lua_pop(L, 1);
        lua_pushlstring(L, p, n);
        lua_pushvalue(L, -1);
        lua_rawseti(L, r->strings_index, slot);
        return;
    }
    unsigned slot = (unsigned)(n * 131u + (unsigned char)p[0] * 31u + (unsigned char)p[n - 1]) & (MM_JSON_CACHE_SLOTS - 1);
    if (c->len[slot] == n && mm_json_same_short(c->text[slot], p, n)) {
        lua_rawgeti(L, r->strings_index, (lua_Integer)slot + 1);
        return;
    }
    lua_pushlstring(L, p, n);
    lua_pushvalue(L, -1);
    lua_rawseti(L, r->strings_index, (lua_Integer)slot + 1);
    memcpy(c->text[slot], p, n);
    c->len[slot] = (unsigned char)n;
}

static inline void mm_json_space(mm_json_reader *r) {
    while (r->i < r->n) {
        unsigned char c = r->s[r->i];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
        r->i++;
    }
}

/// A string at r->i (on the quote), pushed.
static int mm_json_read_string(lua_State *L, mm_json_reader *r) {
    const unsigned char *s = r->s;
    size_t start = r->i + 1, i = start, n = r->n;
    // Plain text sixteen bytes at a time where SSE2 is, else eight (a query string is most of
    // a GraphQL body), to the first quote, backslash or control byte.
    i = mm_skim_stop(s, i, n);
    while (i < n) {
        unsigned char c = s[i];
        if (c == '"') {
            mm_json_push_string(L, r, (const char *)s + start, i - start);   // as received, like Swift
            r->i = i + 1;
            return MM_JSON_OK;
        }
        if (c == '\\' || c < 0x20) break;
        i++;
    }
    r->i = i;
    if (r->i >= r->n) return MM_JSON_FALLBACK;
    // Escapes: decoded here when the text is ASCII and has no \u (Swift repairs UTF-8 there).
    mm_buf *b = r->scratch;
    b->len = 0;
    if (!mm_buf_put(b, (const char *)r->s + start, r->i - start)) return MM_JSON_FALLBACK;
    while (r->i < r->n) {
        unsigned char c = r->s[r->i];
        if (c == '"') {
            r->i++;
            for (size_t k = 0; k < b->len; k++) if ((unsigned char)b->data[k] >= 0x80) return MM_JSON_FALLBACK;
            lua_pushlstring(L, b->data, b->len);
            return MM_JSON_OK;
        }
        if (c < 0x20) return MM_JSON_FALLBACK;
        char out = (char)c;
        if (c == '\\') {
            if (r->i + 1 >= r->n) return MM_JSON_FALLBACK;
            switch (r->s[++r->i]) {
            case '"': out = '"'; break;
            case '\\': out = '\\'; break;
            case '/': out = '/'; break;
            case 'b': out = '\b'; break;
            case 'f': out = '\f'; break;
            case 'n': out = '\n'; break;
            case 'r': out = '\r'; break;
            case 't': out = '\t'; break;
            default: return MM_JSON_FALLBACK;   // \u and invalid escapes
            }
        }
        if (!mm_buf_put(b, &out, 1)) return MM_JSON_FALLBACK;
        r->i++;
    }
    return MM_JSON_FALLBACK;
}

/// A strict JSON number at r->i: integers stay integers (within 64 bits), the rest are finite doubles.
static int mm_json_read_number(lua_State *L, mm_json_reader *r) {
    size_t start = r->i, k = r->i;
    int integral = 1;
    if (k < r->n && r->s[k] == '-') k++;
    if (k < r->n && r->s[k] == '0') k++;
    else if (k < r->n && r->s[k] >= '1' && r->s[k] <= '9') { while (k < r->n && r->s[k] >= '0' && r->s[k] <= '9') k++; }
    else return MM_JSON_FALLBACK;
    if (k < r->n && r->s[k] == '.') {
        integral = 0;
        k++;
        if (k >= r->n || r->s[k] < '0' || r->s[k] > '9') return MM_JSON_FALLBACK;
        while (k < r->n && r->s[k] >= '0' && r->s[k] <= '9') k++;
    }
    if (k < r->n && (r->s[k] == 'e' || r->s[k] == 'E')) {
        integral = 0;
        k++;
        if (k < r->n && (r->s[k] == '+' || r->s[k] == '-')) k++;
        if (k >= r->n || r->s[k] < '0' || r->s[k] > '9') return MM_JSON_FALLBACK;
        while (k < r->n && r->s[k] >= '0' && r->s[k] <= '9') k++;
    }
    // Whatever follows a number must end it (Swift's scanner would read on and fail or differ).
    if (k < r->n) {
        unsigned char c = r->s[k];
        if (c != ',' && c != ']' && c != '}' && c != ' ' && c != '\n' && c != '\r' && c != '\t') return MM_JSON_FALLBACK;
    }
    char text[64];
    if (k - start >= sizeof text) return MM_JSON_FALLBACK;
    memcpy(text, r->s + start, k - start);
    text[k - start] = 0;
    errno = 0;
    if (integral) {
        long long v = strtoll(text, NULL, 10);
        if (errno != 0) return MM_JSON_FALLBACK;
        lua_pushinteger(L, (lua_Integer)v);
    } else {
        double d = strtod(text, NULL);
        if (errno != 0 || d != d || d > 1.7976931348623157e308 || d < -1.7976931348623157e308) return MM_JSON_FALLBACK;
        lua_pushnumber(L, d);
    }
    r->i = k;
    return MM_JSON_OK;
}

// Stack room: a scalar pushes one value, into room its container checked for (an object for
// eight keys and values at a time, an array per element); containers check for their own.
static int mm_json_read_value(lua_State *L, mm_json_reader *r, int depth) {
    if (r->i >= r->n || depth >= 200) return MM_JSON_FALLBACK;
    unsigned char c = r->s[r->i];
    int rc;
    switch (c) {
    case '{': {
        // Keys and values gather on the stack first, so that the table is created at its final
        // size: no rehash as it fills. Set in order afterwards: of duplicate keys, the last wins.
        r->i++;
        int base = lua_gettop(L);
        int count = 0;
        mm_json_space(r);
        if (r->i < r->n && r->s[r->i] == '}') { r->i++; lua_newtable(L); return MM_JSON_OK; }
        for (;;) {
            mm_json_space(r);
            // Room for the next eight keys and values (and a value's own needs) at a time.
            if (r->i >= r->n || r->s[r->i] != '"' || (count % 8 == 0 && !lua_checkstack(L, 2 * 8 + 4))) return MM_JSON_FALLBACK;
            if ((rc = mm_json_read_string(L, r)) != MM_JSON_OK) return rc;
            mm_json_space(r);
            if (r->i >= r->n || r->s[r->i] != ':') return MM_JSON_FALLBACK;
            r->i++;
            mm_json_space(r);
            if ((rc = mm_json_read_value(L, r, depth + 1)) != MM_JSON_OK) return rc;
            count++;
            mm_json_space(r);
            if (r->i >= r->n) return MM_JSON_FALLBACK;
            if (r->s[r->i] == ',') { r->i++; continue; }
            if (r->s[r->i] == '}') { r->i++; break; }
            return MM_JSON_FALLBACK;
        }
        if (!lua_checkstack(L, 3)) return MM_JSON_FALLBACK;
        lua_createtable(L, 0, count);
        int t = lua_gettop(L);
        for (int k = 0; k < count; k++) {
            lua_pushvalue(L, base + 1 + 2 * k);
            lua_pushvalue(L, base + 2 + 2 * k);
            lua_rawset(L, t);
        }
        lua_replace(L, base + 1);
        lua_settop(L, base + 1);
        return MM_JSON_OK;
    }
    case '[': {
        if (!lua_checkstack(L, 3)) return MM_JSON_FALLBACK;   // the table, its metatable, an element
        r->i++;
        lua_newtable(L);
        lua_rawgeti(L, LUA_REGISTRYINDEX, r->array_ref);
        lua_setmetatable(L, -2);
        mm_json_space(r);
        if (r->i < r->n && r->s[r->i] == ']') { r->i++; return MM_JSON_OK; }
        lua_Integer k = 0;
        for (;;) {
            mm_json_space(r);
            if ((rc = mm_json_read_value(L, r, depth + 1)) != MM_JSON_OK) return rc;
            lua_rawseti(L, -2, ++k);
            mm_json_space(r);
            if (r->i >= r->n) return MM_JSON_FALLBACK;
            if (r->s[r->i] == ',') { r->i++; continue; }
            if (r->s[r->i] == ']') { r->i++; return MM_JSON_OK; }
            return MM_JSON_FALLBACK;
        }
    }
    case '"':
        return mm_json_read_string(L, r);
    case 't':
        if (r->n - r->i < 4 || memcmp(r->s + r->i, "true", 4) != 0) return MM_JSON_FALLBACK;
        r->i += 4;
        lua_pushboolean(L, 1);
        return MM_JSON_OK;
    case 'f':
        if (r->n - r->i < 5 || memcmp(r->s + r->i, "false", 5) != 0) return MM_JSON_FALLBACK;
        r->i += 5;
        lua_pushboolean(L, 0);
        return MM_JSON_OK;
    case 'n':
        if (r->n - r->i < 4 || memcmp(r->s + r->i, "null", 4) != 0) return MM_JSON_FALLBACK;
        r->i += 4;
        lua_pushlightuserdata(L, NULL);   // mock.null
        return MM_JSON_OK;
    default:
        return mm_json_read_number(L, r);
    }
}

/// Decodes `n` bytes of JSON and pushes the value (MM_JSON_OK), or pushes nothing and answers
/// MM_JSON_FALLBACK. `scratch` holds unescaped strings; `strings` (or NULL) is the VM's cache
/// of short strings, whose table is in the registry under `strings_ref`.
static inline int mm_json_decode(lua_State *L, const char *s, size_t n, int array_ref, mm_buf *scratch,
                                 int strings_ref, mm_json_strings *strings) {
    int top = lua_gettop(L);
    if (!lua_checkstack(L, 4)) return MM_JSON_FALLBACK;
    mm_json_reader r = { (const unsigned char *)s, n, 0, array_ref, scratch, strings, 0 };
    if (strings != NULL) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, strings_ref);
        r.strings_index = lua_gettop(L);
    }
    mm_buf_reset(scratch);
    mm_json_space(&r);
    int rc = mm_json_read_value(L, &r, 0);
    if (rc == MM_JSON_OK) {
        mm_json_space(&r);
        if (r.i != r.n) rc = MM_JSON_FALLBACK;
    }
    if (rc != MM_JSON_OK) {
        lua_settop(L, top);
    } else if (strings != NULL) {
        lua_remove(L, r.strings_index);   // the value stays, the cache's table goes
    }
    return rc;
}

#endif
