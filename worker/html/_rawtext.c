/* quadfleet.worker.html._scan's raw_ranges (one of the module's source files; its method table is in _scan.c):
 * the script and style contents a parse may leave out, found by walking a page as the HTML5 tokenizer reads it.
 * worker/html/rawtext.py has the rules, why they hold, and the same walk in Python (raw_ranges_py), which the
 * tests hold this one equal to.
 *
 * raw_ranges(data, limit, head_only) -> [start, end, start, end, ...]
 * The scan's text_at (in _scan.c) notes the first tag with evidence whose element may hold content, which
 * bounds the walk (see text_first and raw_last in evidence.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include "_scan.h"

static inline int rt_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static inline int rt_delim(unsigned char c) { return rt_ws(c) || c == '/' || c == '>'; }

/* Whether the n bytes at s are the lower-case literal lit (n == its length), ASCII-case-insensitively. */
static int rt_name(const unsigned char *s, Py_ssize_t n, const char *lit) {
    Py_ssize_t m = (Py_ssize_t)strlen(lit);
    if (n != m) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (lc(s[i]) != (unsigned char)lit[i]) return 0;
    return 1;
}
/* What a start tag's name is to the walk (rawtext.py's sets): a stop, raw text or RCDATA (a script, a style, the
   others), a tag the parser handles without making a <body>. */
enum { RK_HEAD = 1, RK_RAW = 2, RK_SCRIPT = 4, RK_STYLE = 8, RK_STOP = 16 };
static int rt_kind(const unsigned char *t, Py_ssize_t n) {
    switch (n) {
    case 3: return NAME_IS(t, 3, "svg") ? RK_STOP : NAME_IS(t, 3, "xmp") ? RK_RAW : 0;
    case 4:
        if (NAME_IS(t, 4, "math")) return RK_STOP;
        return NAME_IS(t, 4, "meta") || NAME_IS(t, 4, "link") || NAME_IS(t, 4, "html") || NAME_IS(t, 4, "head")
            || NAME_IS(t, 4, "base") ? RK_HEAD : 0;
    case 5:
        return NAME_IS(t, 5, "style") ? RK_STYLE | RK_RAW | RK_HEAD : NAME_IS(t, 5, "title") ? RK_RAW | RK_HEAD : 0;
    case 6:
        return NAME_IS(t, 6, "script") ? RK_SCRIPT | RK_HEAD : NAME_IS(t, 6, "select") ? RK_STOP
            : NAME_IS(t, 6, "iframe") ? RK_RAW : 0;
    case 7: return NAME_IS(t, 7, "noembed") ? RK_RAW : NAME_IS(t, 7, "bgsound") ? RK_HEAD : 0;
    case 8:
        if (NAME_IS(t, 8, "template") || NAME_IS(t, 8, "frameset")) return RK_STOP;
        if (NAME_IS(t, 8, "noframes")) return RK_RAW | RK_HEAD;
        if (NAME_IS(t, 8, "textarea")) return RK_RAW;
        return NAME_IS(t, 8, "basefont") || NAME_IS(t, 8, "noscript") ? RK_HEAD : 0;
    case 9: return NAME_IS(t, 9, "plaintext") ? RK_STOP : 0;
    default: return 0;
    }
}

/* The bytes that matter in a tag (filled once): white space, '/', '>', '=', a quote; 0 for any other. */
enum { RC_WS = 1, RC_SLASH, RC_GT, RC_EQ, RC_QUOTE };
static unsigned char RTC[256];
static void rt_fill(void) {
    RTC[' '] = RTC['\t'] = RTC['\n'] = RTC['\r'] = RTC['\f'] = RC_WS;
    RTC['/'] = RC_SLASH;
    RTC['>'] = RC_GT;
    RTC['='] = RC_EQ;
    RTC['"'] = RTC['\''] = RC_QUOTE;
}

/* The offset after the '>' ending the tag whose name starts at p (-1: the bytes end first); its name (as HTML5
   reads it) at *name, *nlen. States: 0 before a name, 1 in a name, 2 after a name, 3 before a value, 4 unquoted;
   the bytes of a name or an unquoted value that change nothing are passed over in a tight loop. */
static Py_ssize_t rt_tag_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t p, const unsigned char **name,
                             Py_ssize_t *nlen) {
    Py_ssize_t q = p;
    while (q < n && (RTC[d[q]] == 0 || RTC[d[q]] >= RC_EQ)) q++;
    *name = d + p;
    *nlen = q - p;
    int state = 0;
    while (q < n) {
        unsigned char k = RTC[d[q]];
        if (state == 3) {
            if (k == RC_WS) { q++; continue; }
            if (k == RC_QUOTE) {
                const unsigned char *close = memchr(d + q + 1, d[q], (size_t)(n - q - 1));
                if (!close) return -1;
                q = close - d + 1;
                state = 0;
                continue;
            }
            if (k == RC_GT) return q + 1;
            state = 4;
        }
        if (state == 4) {  /* (an unquoted value runs to white space or '>') */
            while (q < n && (k = RTC[d[q]]) != RC_WS && k != RC_GT) q++;
            if (q >= n) return -1;
            if (k == RC_GT) return q + 1;
            state = 0;
            q++;
            continue;
        }
        switch (k) {
        case RC_GT: return q + 1;
        case RC_SLASH: state = 0; break;
        case RC_WS: if (state == 1) state = 2; break;
        case RC_EQ: if (state != 0) { state = 3; break; } /* fall through: '=' starts a name */
        default:  /* a name's bytes (a quote too, here) */
            q++;
            while (q < n && (RTC[d[q]] == 0 || RTC[d[q]] == RC_QUOTE)) q++;
            state = 1;
            continue;
        }
        q++;
    }
    return -1;
}

/* Whether an end tag of the lower-case name lit (m bytes) starts at lt. */
static inline int rt_is_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t lt, const char *lit, Py_ssize_t m) {
    Py_ssize_t e = lt + 2 + m;
    return d[lt + 1] == '/' && e < n && rt_name(d + lt + 2, m, lit) && rt_delim(d[e]);
}

static Py_ssize_t rt_next_lt(const unsigned char *d, Py_ssize_t n, Py_ssize_t p) {
    const unsigned char *lt = p < n ? memchr(d + p, '<', (size_t)(n - p)) : NULL;
    return lt ? lt - d : -1;
}

/* Where the raw text or RCDATA of lit that starts at p ends: its end tag's '<' (-1: none). */
static Py_ssize_t rt_raw_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t p, const char *lit, Py_ssize_t m) {
    for (;;) {
        Py_ssize_t lt = rt_next_lt(d, n, p);
        if (lt < 0 || lt + 1 >= n) return -1;
        if (rt_is_end(d, n, lt, lit, m)) return lt;
        p = lt + 1;
    }
}

/* From the script data escaped states (after "<!--"): the offset of the '>' that leaves them, or of the '<' of the
   end tag that ends the script (-1: neither). */
static Py_ssize_t rt_escaped(const unsigned char *d, Py_ssize_t n, Py_ssize_t i) {
    int dbl = 0, dashes = 2;
    for (; i < n; i++) {
        unsigned char c = d[i];
        if (c == '-') { dashes++; continue; }
        if (c == '>' && dashes >= 2) return i;
        dashes = 0;
        if (c != '<') continue;
        if (!dbl && i + 1 < n && rt_is_end(d, n, i, "script", 6)) return i;
        Py_ssize_t j = dbl ? i + 2 : i + 1;
        if ((!dbl || (i + 1 < n && d[i + 1] == '/')) && j + 6 < n && rt_name(d + j, 6, "script")
                && rt_delim(d[j + 6])) {
            dbl = !dbl;
            i = j + 6;
        }
    }
    return -1;
}

/* Where a script's data that starts at p ends (its end tag's '<', -1: none); *escaped: a "<!--" was in it. */
static Py_ssize_t rt_script_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t p, int *escaped) {
    for (;;) {
        Py_ssize_t lt = rt_next_lt(d, n, p);
        if (lt < 0 || lt + 1 >= n) return -1;
        if (rt_is_end(d, n, lt, "script", 6)) return lt;
        if (!(lt + 3 < n && d[lt + 1] == '!' && d[lt + 2] == '-' && d[lt + 3] == '-')) { p = lt + 1; continue; }
        *escaped = 1;
        p = rt_escaped(d, n, lt + 4);
        if (p < 0) return -1;
        if (d[p] == '<') return p;
        p++;
    }
}

static Py_ssize_t rt_bogus(const unsigned char *d, Py_ssize_t n, Py_ssize_t p) {
    const unsigned char *gt = p < n ? memchr(d + p, '>', (size_t)(n - p)) : NULL;
    return gt ? gt - d + 1 : -1;
}

/* The offset after a comment whose text starts at p (after "<!--"), -1 if the bytes end first. */
static Py_ssize_t rt_comment_end(const unsigned char *d, Py_ssize_t n, Py_ssize_t p) {
    if (p < n && d[p] == '>') return p + 1;
    if (p + 1 < n && d[p] == '-' && d[p + 1] == '>') return p + 2;
    for (;;) {
        const unsigned char *dash = p < n ? memchr(d + p, '-', (size_t)(n - p)) : NULL;
        if (!dash) return -1;
        Py_ssize_t i = dash - d;
        if (i + 2 < n && d[i + 1] == '-' && d[i + 2] == '>') return i + 3;
        if (i + 3 < n && d[i + 1] == '-' && d[i + 2] == '!' && d[i + 3] == '>') return i + 4;
        p = i + 1;
    }
}

static int rt_walk(const unsigned char *d, Py_ssize_t n, Py_ssize_t limit, int head_only, PyObject *out) {
    Py_ssize_t p = 0;
    for (;;) {
        Py_ssize_t lt = rt_next_lt(d, n, p);
        if (lt < 0 || lt >= limit || lt + 2 >= n) return 0;
        if (head_only)
            for (Py_ssize_t i = p; i < lt; i++)
                if (!rt_ws(d[i])) return 0;
        unsigned char c = d[lt + 1];
        const unsigned char *name;
        Py_ssize_t nlen;
        if (is_alpha(c)) {
            Py_ssize_t end = rt_tag_end(d, n, lt + 1, &name, &nlen);
            int kind = rt_kind(name, nlen);
            if (end < 0 || (kind & RK_STOP) || (head_only && !(kind & RK_HEAD))) return 0;
            int script = kind & RK_SCRIPT;
            if (script || (kind & RK_RAW)) {
                int escaped = 0;
                char lit[16];
                for (Py_ssize_t i = 0; i < nlen; i++) lit[i] = (char)lc(name[i]);
                lit[nlen] = 0;
                Py_ssize_t close = script ? rt_script_end(d, n, end, &escaped) : rt_raw_end(d, n, end, lit, nlen);
                if (close < 0) return 0;
                if (close > end && !escaped && (kind & (RK_SCRIPT | RK_STYLE))) {
                    PyObject *a = PyLong_FromSsize_t(end), *b = PyLong_FromSsize_t(close);
                    int r = (a && b) ? (PyList_Append(out, a) | PyList_Append(out, b)) : -1;
                    Py_XDECREF(a);
                    Py_XDECREF(b);
                    if (r) return -1;
                }
                end = close;
            }
            p = end;
        } else if (c == '/') {
            unsigned char c2 = d[lt + 2];
            if (is_alpha(c2)) {
                p = rt_tag_end(d, n, lt + 2, &name, &nlen);
                if (p >= 0 && head_only && (NAME_IS(name, nlen, "body") || NAME_IS(name, nlen, "html")
                                            || NAME_IS(name, nlen, "br")))
                    return 0;
            } else {
                p = c2 == '>' ? lt + 3 : rt_bogus(d, n, lt + 2);
            }
        } else if (c == '!' && lt + 3 < n && d[lt + 2] == '-' && d[lt + 3] == '-') {
            p = rt_comment_end(d, n, lt + 4);
        } else if (c == '!' || c == '?') {
            p = rt_bogus(d, n, lt + 2);
        } else {
            if (head_only) return 0;
            p = lt + 1;
        }
        if (p < 0) return 0;
    }
}

PyObject *qf_scan_raw_ranges(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t limit;
    int head_only;
    if (!PyArg_ParseTuple(args, "y*np", &buf, &limit, &head_only)) return NULL;
    if (!RTC['>']) rt_fill();
    PyObject *out = PyList_New(0);
    if (out && rt_walk(buf.buf, buf.len, limit, head_only, out)) Py_CLEAR(out);
    PyBuffer_Release(&buf);
    return out;
}
