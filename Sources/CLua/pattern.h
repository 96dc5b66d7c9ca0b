#ifndef MOONMOCK_PATTERN_H
#define MOONMOCK_PATTERN_H

// What a Lua pattern match will cost, measured before Lua runs it. Lua's string.find, match,
// gmatch and gsub match in C, where the instruction budget's count hook never fires: a pattern
// that backtracks badly ("^(.-)-(.-)-(.-)-end$" against 1,500 dashes) would hold its thread for
// seconds. This matcher follows the same backtracking as Lua 5.4's (the semantics of its manual,
// §6.4.1: classes, sets, the four quantifiers, anchors, captures, %b, %f and back-references),
// counting each step; the host refuses a call whose count passes the budget, and otherwise lets
// Lua's own function do the work. Nothing here allocates or touches a lua_State.

#include <ctype.h>
#include <stddef.h>
#include <string.h>

enum { MM_PATTERN_OK = 1, MM_PATTERN_OVER = 0, MM_PATTERN_MALFORMED = -1 };
enum { MM_PATTERN_FIRST = 0, MM_PATTERN_ALL = 1, MM_PATTERN_ALL_ANCHORED = 2 };

#define MM_PAT_MAXCAPTURES 32
#define MM_PAT_MAXDEPTH 200
#define MM_PAT_UNFINISHED (-1)
#define MM_PAT_POSITION (-2)

typedef struct {
    const unsigned char *src, *src_end, *pat_end;
    long long steps, budget;
    int level, depth, over, malformed;
    struct { const unsigned char *at; ptrdiff_t len; } cap[MM_PAT_MAXCAPTURES];
} mm_pat;

static const unsigned char *mm_pat_match(mm_pat *m, const unsigned char *s, const unsigned char *p);

static inline int mm_pat_tick(mm_pat *m) {
    if (++m->steps > m->budget) m->over = 1;
    return !m->over;
}

// The end of the single-character class at p (a letter, %x, [set] or '.').
static const unsigned char *mm_pat_class_end(mm_pat *m, const unsigned char *p) {
    unsigned char c = *p++;
    if (c == '%') {
        if (p >= m->pat_end) { m->malformed = 1; return m->pat_end; }
        return p + 1;
    }
    if (c == '[') {
        if (p < m->pat_end && *p == '^') p++;
        do {   // the first character of a set, even ']', is a member
            if (p >= m->pat_end) { m->malformed = 1; return m->pat_end; }
            c = *p++;
            if (c == '%') {
                if (p >= m->pat_end) { m->malformed = 1; return m->pat_end; }
                p++;
            }
        } while (p >= m->pat_end || *p != ']');
        return p + 1;
    }
    return p;
}

static int mm_pat_class(int c, int cl) {
    int yes;
    switch (tolower(cl)) {
    case 'a': yes = isalpha(c); break;
    case 'c': yes = iscntrl(c); break;
    case 'd': yes = isdigit(c); break;
    case 'g': yes = isgraph(c); break;
    case 'l': yes = islower(c); break;
    case 'p': yes = ispunct(c); break;
    case 's': yes = isspace(c); break;
    case 'u': yes = isupper(c); break;
    case 'w': yes = isalnum(c); break;
    case 'x': yes = isxdigit(c); break;
    case 'z': yes = c == 0; break;   // NUL: undocumented since Lua 5.2, still matched by 5.4
    default: return cl == c;
    }
    if (isupper(cl)) yes = !yes;
    return yes != 0;
}

// c against the set [ ... ] that starts at p and whose ']' is at close.
static int mm_pat_set(int c, const unsigned char *p, const unsigned char *close) {
    int member = 1;
    p++;
    if (*p == '^') { member = 0; p++; }
    for (; p < close; p++) {
        if (*p == '%') {
            // As Lua does: the escaped character may be the closing ']' itself, as in "[a-%%]"
            // (the range a-% takes the first '%', the second escapes the ']').
            p++;
            if (mm_pat_class(c, *p)) return member;
        } else if (p + 2 < close && p[1] == '-') {
            if (p[0] <= c && c <= p[2]) return member;
            p += 2;
        } else if (*p == c) {
            return member;
        }
    }
    return !member;
}

static int mm_pat_single(mm_pat *m, const unsigned char *s, const unsigned char *p, const unsigned char *ep) {
    if (s >= m->src_end) return 0;
    int c = *s;
    switch (*p) {
    case '.': return 1;
    case '%': return mm_pat_class(c, p[1]);
    case '[': return mm_pat_set(c, p, ep - 1);
    default: return *p == c;
    }
}

static const unsigned char *mm_pat_greedy(mm_pat *m, const unsigned char *s, const unsigned char *p, const unsigned char *ep) {
    ptrdiff_t n = 0;
    while (mm_pat_single(m, s + n, p, ep)) {
        if (!mm_pat_tick(m)) return NULL;
        n++;
    }
    for (; n >= 0; n--) {
        const unsigned char *r = mm_pat_match(m, s + n, ep + 1);
        if (r || m->over || m->malformed) return r;
    }
    return NULL;
}

static const unsigned char *mm_pat_lazy(mm_pat *m, const unsigned char *s, const unsigned char *p, const unsigned char *ep) {
    for (;;) {
        const unsigned char *r = mm_pat_match(m, s, ep + 1);
        if (r || m->over || m->malformed) return r;
        if (!mm_pat_single(m, s, p, ep)) return NULL;
        s++;
    }
}

static const unsigned char *mm_pat_open(mm_pat *m, const unsigned char *s, const unsigned char *p, ptrdiff_t what) {
    if (m->level >= MM_PAT_MAXCAPTURES) { m->malformed = 1; return NULL; }
    m->cap[m->level].at = s;
    m->cap[m->level].len = what;
    m->level++;
    const unsigned char *r = mm_pat_match(m, s, p);
    if (!r) m->level--;
    return r;
}

static const unsigned char *mm_pat_close(mm_pat *m, const unsigned char *s, const unsigned char *p) {
    int l = m->level - 1;
    while (l >= 0 && m->cap[l].len != MM_PAT_UNFINISHED) l--;
    if (l < 0) { m->malformed = 1; return NULL; }
    m->cap[l].len = s - m->cap[l].at;
    const unsigned char *r = mm_pat_match(m, s, p);
    if (!r) m->cap[l].len = MM_PAT_UNFINISHED;
    return r;
}

static const unsigned char *mm_pat_balance(mm_pat *m, const unsigned char *s, const unsigned char *p) {
    if (p + 1 >= m->pat_end) { m->malformed = 1; return NULL; }
    if (s >= m->src_end || *s != *p) return NULL;
    int open = p[0], close = p[1], depth = 1;
    while (++s < m->src_end) {
        if (!mm_pat_tick(m)) return NULL;
        if (*s == close) { if (--depth == 0) return s + 1; }
        else if (*s == open) depth++;
    }
    return NULL;
}

static const unsigned char *mm_pat_backref(mm_pat *m, const unsigned char *s, int digit) {
    int l = digit - '1';
    if (l < 0 || l >= m->level || m->cap[l].len == MM_PAT_UNFINISHED) { m->malformed = 1; return NULL; }
    ptrdiff_t len = m->cap[l].len;
    if (len < 0) return NULL;   // a position capture matches no text
    m->steps += len / 16;
    if (m->src_end - s >= len && memcmp(m->cap[l].at, s, (size_t)len) == 0) return s + len;
    return NULL;
}

static const unsigned char *mm_pat_match(mm_pat *m, const unsigned char *s, const unsigned char *p) {
    if (!mm_pat_tick(m) || m->malformed) return NULL;
    if (++m->depth > MM_PAT_MAXDEPTH) { m->malformed = 1; m->depth--; return NULL; }
    const unsigned char *r = NULL;
    for (;;) {
        if (p >= m->pat_end) { r = s; break; }
        if (*p == '(') {
            r = (p + 1 < m->pat_end && p[1] == ')') ? mm_pat_open(m, s, p + 2, MM_PAT_POSITION) : mm_pat_open(m, s, p + 1, MM_PAT_UNFINISHED);
            break;
        }
        if (*p == ')') { r = mm_pat_close(m, s, p + 1); break; }
        if (*p == '$' && p + 1 == m->pat_end) { r = s == m->src_end ? s : NULL; break; }
        if (*p == '%' && p + 1 < m->pat_end && p[1] == 'b') {
            s = mm_pat_balance(m, s, p + 2);
            if (!s) break;
            p += 4;
            continue;
        }
        if (*p == '%' && p + 1 < m->pat_end && p[1] == 'f') {
            p += 2;
            if (p >= m->pat_end || *p != '[') { m->malformed = 1; break; }
            const unsigned char *ep = mm_pat_class_end(m, p);
            if (m->malformed) break;
            int before = s == m->src ? 0 : s[-1];
            int at = s < m->src_end ? *s : 0;
            if (!mm_pat_set(before, p, ep - 1) && mm_pat_set(at, p, ep - 1)) { p = ep; continue; }
            break;
        }
        if (*p == '%' && p + 1 < m->pat_end && isdigit(p[1])) {
            s = mm_pat_backref(m, s, p[1]);
            if (!s) break;
            p += 2;
            continue;
        }
        const unsigned char *ep = mm_pat_class_end(m, p);
        if (m->malformed) break;
        int q = ep < m->pat_end ? *ep : 0;
        if (!mm_pat_single(m, s, p, ep)) {
            if (q == '*' || q == '?' || q == '-') { p = ep + 1; continue; }
            break;
        }
        if (q == '?') {
            r = mm_pat_match(m, s + 1, ep + 1);
            if (r || m->over || m->malformed) break;
            p = ep + 1;
            continue;
        }
        if (q == '+') { r = mm_pat_greedy(m, s + 1, p, ep); break; }
        if (q == '*') { r = mm_pat_greedy(m, s, p, ep); break; }
        if (q == '-') { r = mm_pat_lazy(m, s, p, ep); break; }
        s++;
        p = ep;
        if (!mm_pat_tick(m)) break;
    }
    m->depth--;
    return r;
}

/// Whether matching pattern `p` against `s` from byte `init` (0-based) stays within `budget`
/// steps: MM_PATTERN_OK, MM_PATTERN_OVER, or MM_PATTERN_MALFORMED (Lua's own function then
/// reports the error). `mode`: MM_PATTERN_FIRST (find, match: up to the first match; a leading
/// '^' anchors), MM_PATTERN_ALL (gmatch: every match; '^' is a plain character there), or
/// MM_PATTERN_ALL_ANCHORED (gsub: every match, up to `max` of them when max >= 0).
static inline int mm_pattern_within(const char *s, size_t ls, const char *p, size_t lp, size_t init, int mode,
                                    long long max, long long budget) {
    mm_pat m;
    memset(&m, 0, sizeof m);
    m.src = (const unsigned char *)s;
    m.src_end = m.src + ls;
    m.pat_end = (const unsigned char *)p + lp;
    m.budget = budget;
    const unsigned char *pat = (const unsigned char *)p;
    int anchor = mode != MM_PATTERN_ALL && lp > 0 && *pat == '^';
    if (anchor) pat++;
    if (init > ls) return MM_PATTERN_OK;
    const unsigned char *at = m.src + init, *last = NULL;
    long long matches = 0;
    for (;;) {
        m.level = 0;
        m.depth = 0;
        const unsigned char *e = mm_pat_match(&m, at, pat);
        if (m.malformed) return MM_PATTERN_MALFORMED;
        if (m.over) return MM_PATTERN_OVER;
        if (e && mode == MM_PATTERN_FIRST) return MM_PATTERN_OK;
        if (e && e != last) {
            if (max >= 0 && ++matches >= max) return MM_PATTERN_OK;
            at = last = e;
        } else if (at < m.src_end) {
            at++;
        } else {
            return MM_PATTERN_OK;
        }
        if (anchor) return MM_PATTERN_OK;
        if (!mm_pat_tick(&m)) return MM_PATTERN_OVER;
    }
}

#endif
