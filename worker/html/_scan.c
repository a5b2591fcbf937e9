/* quadfleet.worker.html._scan: one pass over a page's bytes that collects the markup evidence the prefilter needs.
 *
 * Why C: the prefilter must cost a small fraction of an lxml parse (about 1 ms for a 125 KB page). In Python
 * a single substring scan of such a page costs 40-50 us and a regex over it 100-1000 us; thirteen formats
 * cannot be decided that way. Here memchr finds each '<', start tags are tokenized in place, and only the
 * attributes that matter are looked at: about 30-60 us a page.
 *
 * The rules (worker/html/evidence.py has the same scanner in Python, and the tests hold the two equal):
 * it must see every attribute any extractor (lxml's parser, the JSON-LD block scanner) could see, so where
 * HTML parsers differ it takes the reading that finds more:
 *   - nothing is skipped: tags inside comments, scripts and styles are scanned too;
 *   - a quoted attribute value that holds '<' is scanned again for tags (the JSON-LD scanner reads
 *     "<script" even there); a quote never closed ends the value at the next '>' (and the rest is scanned);
 *   - a '<' among a tag's attributes is read as HTML5 (libxml2 2.14) reads it, the start of an attribute name
 *     with the tag going on, and also as the start of a tag of its own;
 *   - a tag name ends where its letters, digits and ":_.-" do, and also, as in HTML5, at white space, '/' or
 *     '>': where the two could read the attributes otherwise ("<p!x=' property=…>"), HTML5's reading ends
 *     the tag and the other is read within the same bytes;
 *   - only HTML5's white space is skipped around '=' (a control byte there starts a name or a value), and a
 *     control byte or a byte >= 0x80 before an '=' is a name to which the '=' gives a value;
 *   - bytes >= 0x80 separate attributes (a decoded page may have Unicode white space there) and bound class
 *     and rel tokens, as ASCII white space does;
 *   - attribute and tag names compare ASCII-case-insensitively.
 *
 * scan(data, class_tokens, rel_tokens) -> (flags, class_mask, rdfa_last, dom_last, head_end, base_at, counts, tags,
 *                                          odd, cut_last, root_last, body_last)
 *   flags      bit 0 JSON-LD script type, 1 itemscope, 2 RDFa (@property=, @typeof=, @vocab=, or a @rel/@rev
 *              value holding ':', '&', "license", "describedby" or "role"), 3 itemprop-reverse,
 *              4 XFN (<a rel> with a token of rel_tokens), 5 RDFa seen on a tag other than meta/link (on
 *              html or head it reads beyond the head's tree: the whole text, a @rel completed in the body),
 *              6 @vocab, 7 @typeof=, 8 references by id (an itemref or headers attribute, or a class value
 *              holding "include": the microformats' include pattern), which reach anywhere in the page
 *   class_mask bit i: class_tokens[i] is a token of some class attribute
 *   rdfa_last  offset of the last tag with RDFa evidence (-1: none)
 *   dom_last   offset of the last tag with itemscope, class-token or XFN evidence (-1: none)
 *   head_end   offset of the first "<body" or "</head" tag (-1: none)
 *   base_at    offset of the first "<base" (case-insensitive, whatever follows; -1: none)
 *   counts     (@property=, @typeof=, @rel and @rev values as in flag 2): at least as many as the DOM
 *              has, since every tag is read (the RDFa extractor's head-only shortcut relies on it)
 *   tags       start tags read (at least the elements a parser would build: the page's element budget)
 *   odd        [(offset, attribute name, tag name, raw value)] class values and <a rel> values holding '&'
 *              (character references: Python unescapes and decides)
 *   cut_last   offset of the last tag, beside rdfa_last's and dom_last's, whose content a DOM extractor may read:
 *              an itemscope, itemprop, itemprop-reverse or itemref attribute, an http-equiv holding
 *              "content-language" or '&' (microdata's default language), a @typeof without a value (RDFa
 *              gives it a blank node, which numbers the later ones; -1: none)
 *   root_last  offset of the last "<html" or "<frameset" start tag (-1: none): an HTML5 parser adds a later
 *              <html>'s attributes to the root, and a <frameset> may drop the body (a parse cut before it is
 *              not the page's tree)
 *   body_last  offset of the last "<body" start tag (-1: none): its attributes go to the body already made
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define F_JSONLD 1
#define F_ITEMSCOPE 2
#define F_RDFA 4
#define F_REVERSE 8
#define F_XFN 16
#define F_RDFA_BODY 32
#define F_VOCAB 64
#define F_TYPEOF 128
#define F_REFS 256

#define MAX_TOKENS 62

typedef struct {
    const unsigned char *base;
    long flags;
    unsigned long long class_mask;
    Py_ssize_t rdfa_last, dom_last, head_end, base_at, cut_last, root_last, body_last;
    Py_ssize_t c_property, c_typeof, c_rel, c_rev, tags;
    PyObject *odd;
    Py_ssize_t n_class, n_rel;
    const char *class_tok[MAX_TOKENS];
    Py_ssize_t class_len[MAX_TOKENS];
    const char *rel_tok[MAX_TOKENS];
    Py_ssize_t rel_len[MAX_TOKENS];
    unsigned long long class_lens, rel_lens;  /* bit l: some token is l bytes long (set once per scan) */
    int depth;
} State;

/* Unquoted values end at HTML's white space; elsewhere in a tag any control byte separates (Python's \\s). */
static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static inline int is_sp(unsigned char c) { return c <= ' '; }
/* Token boundaries in class/rel values: ASCII white space as str.split() knows it, or any non-ASCII byte. */
static inline int is_bound(unsigned char c) {
    return c <= ' ' ? (c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31)) : c >= 0x80;
}
static inline int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static inline int is_namechar(unsigned char c) {
    return is_alpha(c) || (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.' || c == '-';
}

/* The same tests as tables (filled at import): the inner loops run over every byte of every tag. */
enum { T_SEP = 1, T_NAMESTOP = 2, T_BOUND = 4, T_NAME = 8, T_VALSTOP = 16 };
static unsigned char T[256];

static void fill_tables(void) {
    for (int i = 0; i < 256; i++) {
        unsigned char c = (unsigned char)i, t = 0;
        if (is_sp(c) || c == '/' || c >= 0x80) t |= T_SEP;
        if (is_sp(c) || c == '/' || c == '>' || c == '=' || c == '<' || c >= 0x80) t |= T_NAMESTOP;
        if (is_bound(c)) t |= T_BOUND;
        if (is_namechar(c)) t |= T_NAME;
        if (is_ws(c) || c == '>') t |= T_VALSTOP;
        T[i] = t;
    }
}
static inline unsigned char lc(unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

static int eq_ci(const unsigned char *s, Py_ssize_t n, const char *lit) {
    Py_ssize_t m = (Py_ssize_t)strlen(lit);
    if (n != m) return 0;
    for (Py_ssize_t i = 0; i < n; i++) if (lc(s[i]) != (unsigned char)lit[i]) return 0;
    return 1;
}

static int contains_ci(const unsigned char *s, Py_ssize_t n, const char *lit) {
    Py_ssize_t m = (Py_ssize_t)strlen(lit);
    for (Py_ssize_t i = 0; i + m <= n; i++) {
        if (lc(s[i]) != (unsigned char)lit[0]) continue;
        Py_ssize_t k = 1;
        while (k < m && lc(s[i + k]) == (unsigned char)lit[k]) k++;
        if (k == m) return 1;
    }
    return 0;
}

static unsigned long long length_mask(const Py_ssize_t *len, Py_ssize_t ntok) {
    unsigned long long lenmask = 0;
    for (Py_ssize_t t = 0; t < ntok; t++) if (len[t] < 64) lenmask |= 1ULL << len[t];
    return lenmask;
}

/* Bit mask of the tokens (lower-case ASCII) that occur as whole tokens of the value (``lenmask``: their
   lengths, from length_mask, so that most tokens of the value are passed over at a glance). */
static unsigned long long match_tokens(const unsigned char *v, Py_ssize_t n, const char **tok, const Py_ssize_t *len,
                                       Py_ssize_t ntok, unsigned long long lenmask) {
    unsigned long long mask = 0;
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && (T[v[i]] & T_BOUND)) i++;
        Py_ssize_t start = i;
        while (i < n && !(T[v[i]] & T_BOUND)) i++;
        Py_ssize_t tl = i - start;
        if (!tl || tl > 63 || !(lenmask >> tl & 1)) continue;
        for (Py_ssize_t t = 0; t < ntok; t++) {
            if (len[t] != tl) continue;
            Py_ssize_t k = 0;
            while (k < tl && lc(v[start + k]) == (unsigned char)tok[t][k]) k++;
            if (k == tl) mask |= 1ULL << t;
        }
    }
    return mask;
}

static int add_odd(State *st, Py_ssize_t at, const char *attr, const unsigned char *tag, Py_ssize_t taglen,
                   const unsigned char *v, Py_ssize_t vn) {
    PyObject *item = Py_BuildValue("(nsy#y#)", at, attr, (const char *)tag, taglen, (const char *)v, vn);
    if (!item) return -1;
    int r = PyList_Append(st->odd, item);
    Py_DECREF(item);
    return r;
}

static int scan_range(State *st, const unsigned char *p, const unsigned char *end);

/* One attribute of a start tag. */
static int attribute(State *st, Py_ssize_t at, const unsigned char *tag, Py_ssize_t taglen,
                     const unsigned char *name, Py_ssize_t nlen, int has_eq, const unsigned char *v, Py_ssize_t vn) {
    switch (nlen) {
    case 3:
        if (eq_ci(name, 3, "rel") || eq_ci(name, 3, "rev")) {
            if (memchr(v, ':', vn) || memchr(v, '&', vn) || contains_ci(v, vn, "license")
                    || contains_ci(v, vn, "describedby") || contains_ci(v, vn, "role")) {
                if (lc(name[2]) == 'l') st->c_rel++; else st->c_rev++;
                goto rdfa;
            }
            if (taglen == 1 && lc(tag[0]) == 'a' && lc(name[2]) == 'l') goto xfn;
        }
        return 0;
    case 4:
        if (eq_ci(name, 4, "type") && eq_ci(tag, taglen, "script")
                && (contains_ci(v, vn, "ld+json") || memchr(v, '&', vn)))
            st->flags |= F_JSONLD;
        return 0;
    case 5:
        if (eq_ci(name, 5, "class")) {
            if (contains_ci(v, vn, "include")) st->flags |= F_REFS;
            if (memchr(v, '&', vn)) return add_odd(st, at, "class", tag, taglen, v, vn);
            unsigned long long m = match_tokens(v, vn, st->class_tok, st->class_len, st->n_class, st->class_lens);
            if (m) { st->class_mask |= m; st->dom_last = at; }
        } else if (has_eq && eq_ci(name, 5, "vocab")) {
            st->flags |= F_VOCAB;
            goto rdfa;
        }
        return 0;
    case 6:
        if (eq_ci(name, 6, "typeof")) {
            if (has_eq) { st->flags |= F_TYPEOF; st->c_typeof++; goto rdfa; }
            st->cut_last = at;
        }
        return 0;
    case 7:
        if (eq_ci(name, 7, "itemref")) { st->flags |= F_REFS; st->cut_last = at; }
        else if (eq_ci(name, 7, "headers")) st->flags |= F_REFS;
        return 0;
    case 8:
        if (has_eq && eq_ci(name, 8, "property")) { st->c_property++; goto rdfa; }
        if (eq_ci(name, 8, "itemprop")) st->cut_last = at;
        return 0;
    case 9:
        if (eq_ci(name, 9, "itemscope")) { st->flags |= F_ITEMSCOPE; st->dom_last = st->cut_last = at; }
        return 0;
    case 10:  /* microdata's default language: the last <meta http-equiv=content-language> (a value holding
                 '&' counts too: a character reference could spell it) */
        if (eq_ci(name, 10, "http-equiv") && (contains_ci(v, vn, "content-language") || memchr(v, '&', vn)))
            st->cut_last = at;
        return 0;
    case 16:
        if (eq_ci(name, 16, "itemprop-reverse")) { st->flags |= F_REVERSE; st->cut_last = at; }
        return 0;
    default:
        return 0;
    }
rdfa:
    st->flags |= F_RDFA;
    st->rdfa_last = at;
    if (!(eq_ci(tag, taglen, "meta") || eq_ci(tag, taglen, "link")))
        st->flags |= F_RDFA_BODY;
    /* a <a rel> that is RDFa may be XFN too */
    if (!(nlen == 3 && taglen == 1 && lc(tag[0]) == 'a' && lc(name[2]) == 'l')) return 0;
xfn:
    if (memchr(v, '&', vn)) return add_odd(st, at, "rel", tag, taglen, v, vn);
    if (match_tokens(v, vn, st->rel_tok, st->rel_len, st->n_rel, st->rel_lens)) { st->flags |= F_XFN; st->dom_last = at; }
    return 0;
}

/* Attributes of a start tag whose name ends at p; returns where scanning goes on. A '<' among them is read
   both ways: as HTML5 (and libxml2 2.14) reads it, the start of an attribute name, the tag going on; and, once
   the tag is read, as the start of a tag of its own, over the same bytes (older parsers). */
static const unsigned char *start_tag(State *st, Py_ssize_t at, const unsigned char *tag, Py_ssize_t taglen,
                                      const unsigned char *p, const unsigned char *end, int *err) {
    const unsigned char *inner = NULL;  /* the first '<' among the attributes */
    while (p < end) {
        int junk = 0;  /* a control byte or a byte >= 0x80 passed over: to HTML5, (part of) a name */
        while (p < end && (T[*p] & T_SEP)) { if (!is_ws(*p) && *p != '/') junk = 1; p++; }
        if (p >= end) break;
        if (*p == '>') { p++; break; }
        if (*p == '<' && !inner) inner = p;
        const unsigned char *name = p;
        Py_ssize_t nlen = 0;
        const unsigned char *q = p;
        if (!(junk && *p == '=')) {  /* (else the '=' gives that name a value, as HTML5 reads it) */
            p++;  /* the first character belongs to the name, even '=' */
            while (p < end && !(T[*p] & T_NAMESTOP)) p++;
            nlen = p - name;
            q = p;  /* (HTML5 white space only: a control byte starts a name or a value) */
            while (q < end && is_ws(*q)) q++;
        }
        const unsigned char *v = p;
        Py_ssize_t vn = 0;
        int has_eq = 0;
        if (q < end && *q == '=') {
            has_eq = 1;
            q++;
            while (q < end && is_ws(*q)) q++;
            if (q < end && (*q == '"' || *q == '\'')) {
                const unsigned char *close = memchr(q + 1, *q, end - q - 1);
                v = q + 1;
                if (close) {
                    vn = close - v;
                    p = close + 1;
                    if (vn && memchr(v, '<', vn) && st->depth < 4) {
                        st->depth++;
                        int r = scan_range(st, v, close);
                        st->depth--;
                        if (r) { *err = 1; return end; }
                    }
                } else {  /* never closed: the value ends at the next '>' and scanning goes on */
                    const unsigned char *gt = memchr(v, '>', end - v);
                    vn = (gt ? gt : end) - v;
                    p = v + vn;
                }
            } else {
                v = q;
                while (q < end && !(T[*q] & T_VALSTOP)) q++;
                vn = q - v;
                p = q;
            }
        }
        if (nlen >= 3 && nlen <= 16 && attribute(st, at, tag, taglen, name, nlen, has_eq, v, vn)) {
            *err = 1;
            return end;
        }
    }
    if (inner && st->depth < 4) {
        st->depth++;
        int r = scan_range(st, inner, p);
        st->depth--;
        if (r) { *err = 1; return end; }
    }
    return p;
}

static int scan_range(State *st, const unsigned char *p, const unsigned char *end) {
    while (p < end) {
        const unsigned char *lt = memchr(p, '<', end - p);
        if (!lt) break;
        p = lt + 1;
        if (p >= end) break;
        Py_ssize_t at = lt - st->base;
        if (*p == '/') {
            const unsigned char *name = p + 1;
            const unsigned char *q = name;
            while (q < end && (T[*q] & T_NAME)) q++;
            if (st->head_end < 0 && eq_ci(name, q - name, "head")) st->head_end = at;
            continue;
        }
        if (!is_alpha(*p)) continue;
        if (st->base_at < 0 && end - p >= 4 && lc(p[0]) == 'b' && lc(p[1]) == 'a' && lc(p[2]) == 's' && lc(p[3]) == 'e')
            st->base_at = at;
        const unsigned char *tag = p;
        while (p < end && (T[*p] & T_NAME)) p++;
        Py_ssize_t taglen = p - tag;
        st->tags++;
        if (taglen == 4 && eq_ci(tag, 4, "body")) {
            if (st->head_end < 0) st->head_end = at;
            st->body_last = at;
        }
        if ((taglen == 4 && eq_ci(tag, 4, "html")) || (taglen == 8 && eq_ci(tag, 8, "frameset"))) st->root_last = at;
        /* HTML5 (and libxml2 2.14) runs a tag name up to white space, '/' or '>': where the bytes after the
           name's letters could make the attributes read otherwise ("<p!x='": '=', '<', a quote, a control
           byte, a byte >= 0x80; or white space, then '='), they are read from both ends. (Other bytes, "<b;"
           in a script, are one attribute name to the first reading: the same.) */
        const unsigned char *html5 = p;
        int odd = 0;
        while (html5 < end && !is_ws(*html5) && *html5 != '/' && *html5 != '>') {
            unsigned char c = *html5++;
            if (c == '=' || c == '<' || c == '"' || c == '\'' || c < 0x20 || c >= 0x80) odd = 1;
        }
        if (html5 != p && !odd) {  /* "<p! = property=…": white space, then '=', which HTML5 reads as a name */
            const unsigned char *e = html5;
            while (e < end && is_ws(*e)) e++;
            odd = e < end && *e == '=';
        }
        /* Where they could differ, HTML5's reading ends the tag (what the parser builds: the tags counted are
           never fewer), and the first one is read again within those bytes: unbounded, it went on past
           every later '>' in quoted values ('<a"=">"' repeated), reading the rest of the page again from
           each such tag. */
        int err = 0;
        const unsigned char *after = start_tag(st, at, tag, taglen, odd ? html5 : p, end, &err);
        if (err) return -1;
        if (odd && st->depth < 4) {
            st->depth++;
            start_tag(st, at, tag, taglen, p, after, &err);
            st->depth--;
            if (err) return -1;
        }
        p = after;
    }
    return 0;
}

static int tokens(PyObject *seq, const char **tok, Py_ssize_t *len, Py_ssize_t *n) {
    PyObject *fast = PySequence_Fast(seq, "tokens must be a sequence of bytes");
    if (!fast) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
    if (k > MAX_TOKENS) { Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "too many tokens"); return -1; }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *b = PySequence_Fast_GET_ITEM(fast, i);
        char *s;
        if (PyBytes_AsStringAndSize(b, &s, &len[i]) < 0) { Py_DECREF(fast); return -1; }
        if (len[i] < 1 || len[i] > 63) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "tokens must be 1 to 63 bytes long");
            return -1;
        }
        tok[i] = s;  /* the caller keeps the tuple alive for the call */
    }
    *n = k;
    Py_DECREF(fast);
    return 0;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *class_seq, *rel_seq;
    if (!PyArg_ParseTuple(args, "y*OO", &buf, &class_seq, &rel_seq)) return NULL;
    State st;
    memset(&st, 0, sizeof st);
    st.base = buf.buf;
    st.rdfa_last = st.dom_last = st.head_end = st.base_at = st.cut_last = st.root_last = st.body_last = -1;
    if (tokens(class_seq, st.class_tok, st.class_len, &st.n_class) < 0
            || tokens(rel_seq, st.rel_tok, st.rel_len, &st.n_rel) < 0) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    st.class_lens = length_mask(st.class_len, st.n_class);
    st.rel_lens = length_mask(st.rel_len, st.n_rel);
    st.odd = PyList_New(0);
    if (!st.odd) { PyBuffer_Release(&buf); return NULL; }
    const unsigned char *p = buf.buf;
    int r = scan_range(&st, p, p + buf.len);
    PyBuffer_Release(&buf);
    if (r) { Py_DECREF(st.odd); return NULL; }
    PyObject *mask = PyLong_FromUnsignedLongLong(st.class_mask);
    if (!mask) { Py_DECREF(st.odd); return NULL; }
    return Py_BuildValue("(lNnnnn(nnnn)nNnnn)", st.flags, mask, st.rdfa_last, st.dom_last, st.head_end, st.base_at,
                         st.c_property, st.c_typeof, st.c_rel, st.c_rev, st.tags, st.odd, st.cut_last, st.root_last,
                         st.body_last);
}

/* Whether the bytes are valid UTF-8 exactly as CPython's strict decoder takes it (no overlong forms, no
   surrogates, nothing past U+10FFFF, no cut sequence): lets a page go to lxml as it is without decoding it
   first just to learn that. ASCII runs are skipped 32 bytes at a time, then eight. */
static PyObject *utf8_valid(PyObject *self, PyObject *arg) {
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = buf.buf, *end = p + buf.len;
    int ok = 1;
    while (p < end) {
        while (end - p >= 32) {
            uint64_t w[4];
            memcpy(w, p, 32);
            if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
            p += 32;
        }
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (!(w & 0x8080808080808080ULL)) { p += 8; continue; }
        }
        unsigned char c = *p;
        if (c < 0x80) { p++; continue; }
        Py_ssize_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c >= 0xE0 && c <= 0xEF) { need = 2; if (c == 0xE0) lo = 0xA0; else if (c == 0xED) hi = 0x9F; }
        else if (c >= 0xF0 && c <= 0xF4) { need = 3; if (c == 0xF0) lo = 0x90; else if (c == 0xF4) hi = 0x8F; }
        else { ok = 0; break; }
        if (end - p <= need || p[1] < lo || p[1] > hi) { ok = 0; break; }
        for (Py_ssize_t k = 2; k <= need; k++)
            if (p[k] < 0x80 || p[k] > 0xBF) { ok = 0; break; }
        if (!ok) break;
        p += need + 1;
    }
    PyBuffer_Release(&buf);
    return PyBool_FromLong(ok);
}

/* gzip_member_at(data, lo, hi) -> int: the first offset i, lo <= i <= hi - 2, where the bytes 1f 8b 08 (a gzip
 * member header) start, or -1: Python's bytes.find(b"\x1f\x8b", lo, hi) followed by a check of the third byte,
 * as gzip_member_at_py does (worker/archive/gzip_members.py), but memchr-driven: the FastWARC reader's check
 * reads every compressed byte of a gzip WARC, and bytes.find of two bytes took 2% of a whole run on the crawl
 * mix. lo and hi are clamped to the data as slicing clamps them; the third byte may lie at hi or beyond (and a
 * header whose third byte is past the data's end is not one). */
static PyObject *gzip_member_at(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t lo, hi, found = -1;
    if (!PyArg_ParseTuple(args, "y*nn", &buf, &lo, &hi)) return NULL;
    Py_ssize_t n = buf.len;
    if (lo < 0) { lo += n; if (lo < 0) lo = 0; }
    if (hi < 0) { hi += n; if (hi < 0) hi = 0; }
    if (hi > n) hi = n;
    const unsigned char *d = buf.buf;
    Py_ssize_t at = lo;
    while (at + 2 <= hi) {
        const unsigned char *q = memchr(d + at, 0x1f, (size_t)(hi - 1 - at));
        if (q == NULL) break;
        at = q - d;
        if (d[at + 1] == 0x8b && at + 2 < n && d[at + 2] == 0x08) { found = at; break; }
        at++;
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"utf8_valid", utf8_valid, METH_O, "utf8_valid(data) -> bool: whether bytes.decode('utf-8') would succeed."},
    {"scan", scan, METH_VARARGS, "scan(data, class_tokens, rel_tokens) -> (flags, class_mask, rdfa_last, dom_last, "
     "head_end, base_at, counts, tags, odd, cut_last): the markup evidence of a page (see quadfleet.worker.html.evidence)."},
    {"gzip_member_at", gzip_member_at, METH_VARARGS, "gzip_member_at(data, lo, hi) -> int: the first gzip member "
     "header (1f 8b 08) starting in data[lo:hi - 1], or -1."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", "The prefilter's one pass, UTF-8 validation and the gzip member search, in C.", -1, methods};

PyMODINIT_FUNC PyInit__scan(void) {
    fill_tables();
    return PyModule_Create(&module);
}
