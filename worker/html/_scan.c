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
 *                                          odd, cut_last, root_last, body_last, raw_last)
 *   flags      bit 0 JSON-LD script type, 1 itemscope, 2 RDFa (@property=, @typeof=, @vocab=, or a @rel/@rev
 *              value holding ':', '&', "license", "describedby" or "role"), 3 itemprop-reverse,
 *              4 XFN (<a rel> with a token of rel_tokens), 5 RDFa seen on a tag other than meta/link (on
 *              html or head it reads beyond the head's tree: the whole text, a @rel completed in the body),
 *              6 @vocab, 7 @typeof=, 8 references by id (an itemref or headers attribute, or a class value
 *              holding "include": the microformats' include pattern), which reach anywhere in the page;
 *              9 evidence on a <body> tag (its attributes go to a body that may hold what came before)
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
 *   raw_last   offset of the last "<script" or "<style" tag before the first tag with evidence whose element may
 *              hold content (-1: none): how far a parse may leave out raw text (_rawtext.c, rawtext.py)
 *
 * The module is this file and two more, which share _scan.h: _scan_bytes.c, the byte searches beside the scan (the
 * needles and token sets a value is matched against, UTF-8 validation, the gzip member search), and _rawtext.c,
 * raw_ranges (the walk that leaves out raw text).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_scan.h"

#define F_JSONLD 1
#define F_ITEMSCOPE 2
#define F_RDFA 4
#define F_REVERSE 8
#define F_XFN 16
#define F_RDFA_BODY 32
#define F_VOCAB 64
#define F_TYPEOF 128
#define F_REFS 256
#define F_BODY_TEXT 512

#define RAW_MAX 256  /* <script and <style tags remembered (more: raw_last is the one before text_first) */

typedef struct {
    const unsigned char *base, *end;  /* the whole page */
    /* The first '<' at or after lt_from is lt_at (NULL: none before the page's end). Both the attribute values
       (does this one hold a '<'?) and the main loop (where is the next tag?) ask for the next '<': one memchr
       from a value's start mostly answers every later value of the tag and the next tag's start as well. */
    const unsigned char *lt_from, *lt_at;
    long flags;
    unsigned long long class_mask;
    Py_ssize_t rdfa_last, dom_last, head_end, base_at, cut_last, root_last, body_last, text_first;
    Py_ssize_t c_property, c_typeof, c_rel, c_rev, tags;
    PyObject *odd;
    Tokens cls, rel;
    int depth, raw_n;
    Py_ssize_t raw_at[RAW_MAX];
} State;

/* Unquoted values end at HTML's white space; elsewhere in a tag any control byte separates (Python's \\s). */
static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
static inline int is_sp(unsigned char c) { return c <= ' '; }
/* Token boundaries in class/rel values: ASCII white space as str.split() knows it, or any non-ASCII byte. */
static inline int is_bound(unsigned char c) {
    return c <= ' ' ? (c == ' ' || (c >= 9 && c <= 13) || (c >= 28 && c <= 31)) : c >= 0x80;
}
static inline int is_namechar(unsigned char c) {
    return is_alpha(c) || (c >= '0' && c <= '9') || c == ':' || c == '_' || c == '.' || c == '-';
}

/* The same tests as tables (filled at import): the inner loops run over every byte of every tag. */
unsigned short qf_scan_T[256];  /* (_scan.h: the bits, and why the table is shared) */

static void fill_tables(void) {
    for (int i = 0; i < 256; i++) {
        unsigned char c = (unsigned char)i;
        unsigned short t = 0;
        if (is_sp(c) || c == '/' || c >= 0x80) t |= T_SEP;
        if (is_sp(c) || c == '/' || c == '>' || c == '=' || c == '<' || c >= 0x80) t |= T_NAMESTOP;
        if (is_bound(c)) t |= T_BOUND;
        if (is_namechar(c)) t |= T_NAME;
        if (is_ws(c) || c == '>') t |= T_VALSTOP;
        if ((t & T_SEP) && !is_ws(c) && c != '/') t |= T_JUNK;
        if (is_ws(c)) t |= T_WS;
        if (is_bound(c) || c == '&') t |= T_TOKSTOP;
        if (is_ws(c) || c == '/' || c == '>') t |= T_H5STOP;
        if (c == '=' || c == '<' || c == '"' || c == '\'' || c < 0x20 || c >= 0x80) t |= T_H5ODD;
        qf_scan_T[i] = t;
    }
}

static int add_odd(State *st, Py_ssize_t at, const char *attr, const unsigned char *tag, Py_ssize_t taglen,
                   const unsigned char *v, Py_ssize_t vn) {
    PyObject *item = Py_BuildValue("(nsy#y#)", at, attr, (const char *)tag, taglen, (const char *)v, vn);
    if (!item) return -1;
    int r = PyList_Append(st->odd, item);
    Py_DECREF(item);
    return r;
}

/* The first '<' at or after from (from <= the page's end), or NULL: see State.lt_from. */
static inline const unsigned char *next_lt(State *st, const unsigned char *from) {
    if (from >= st->lt_from && (st->lt_at == NULL || from <= st->lt_at)) return st->lt_at;
    st->lt_from = from;
    st->lt_at = memchr(from, '<', st->end - from);
    return st->lt_at;
}

static int scan_range(State *st, const unsigned char *p, const unsigned char *end);

/* Evidence on the tag at `at`: the first whose element may hold content (text_first; see rawtext.py). */
static int is_void(const unsigned char *t, Py_ssize_t n) {
    switch (n) {
    case 2: return NAME_IS(t, 2, "br") || NAME_IS(t, 2, "hr");
    case 3: return NAME_IS(t, 3, "img") || NAME_IS(t, 3, "col") || NAME_IS(t, 3, "wbr");
    case 4: return NAME_IS(t, 4, "meta") || NAME_IS(t, 4, "link") || NAME_IS(t, 4, "area") || NAME_IS(t, 4, "base");
    case 5: return NAME_IS(t, 5, "input") || NAME_IS(t, 5, "embed") || NAME_IS(t, 5, "param") || NAME_IS(t, 5, "track")
                || NAME_IS(t, 5, "frame");
    case 6: return NAME_IS(t, 6, "source") || NAME_IS(t, 6, "keygen");
    case 7: return NAME_IS(t, 7, "bgsound");
    case 8: return NAME_IS(t, 8, "basefont");
    default: return 0;
    }
}
static void text_at(State *st, Py_ssize_t at, const unsigned char *tag, Py_ssize_t taglen) {
    const unsigned char *e = tag + taglen;
    int exact = e >= st->end || (qf_scan_T[*e] & T_H5STOP);  /* (else HTML5 reads a longer name) */
    if (exact && is_void(tag, taglen)) return;
    if (exact && NAME_IS(tag, taglen, "html")) at = 0;
    else if (exact && NAME_IS(tag, taglen, "body")) st->flags |= F_BODY_TEXT;
    if (st->text_first < 0 || at < st->text_first) st->text_first = at;
}

/* One attribute of a start tag (its name 3 to 16 bytes long): 1 if it is evidence (it set rdfa_last, dom_last or
   cut_last, or is an odd value), 0 if not, -1 on an error. */
static int attribute(State *st, Py_ssize_t at, const unsigned char *tag, Py_ssize_t taglen,
                     const unsigned char *name, Py_ssize_t nlen, int has_eq, const unsigned char *v, Py_ssize_t vn) {
    switch (nlen) {
    case 3:
        if (NAME_IS(name, 3, "rel") || NAME_IS(name, 3, "rev")) {
            if (memchr(v, ':', vn) || memchr(v, '&', vn) || qf_scan_contains_ci(v, vn, N_LICENSE)
                    || qf_scan_contains_ci(v, vn, N_DESCRIBEDBY) || qf_scan_contains_ci(v, vn, N_ROLE)) {
                if (lc(name[2]) == 'l') st->c_rel++; else st->c_rev++;
                goto rdfa;
            }
            if (taglen == 1 && lc(tag[0]) == 'a' && lc(name[2]) == 'l') goto xfn;
        }
        return 0;
    case 4:
        if (NAME_IS(name, 4, "type") && NAME_IS(tag, taglen, "script")
                && (qf_scan_contains_ci(v, vn, N_LDJSON) || memchr(v, '&', vn)))
            st->flags |= F_JSONLD;
        return 0;
    case 5:
        if (NAME_IS(name, 5, "class")) {
            if (qf_scan_contains_ci(v, vn, N_INCLUDE)) st->flags |= F_REFS;
            unsigned long long m = qf_scan_match_tokens(v, vn, &st->cls, st->end);
            if (m == ~0ULL) return add_odd(st, at, "class", tag, taglen, v, vn) ? -1 : 1;
            if (m) { st->class_mask |= m; st->dom_last = at; return 1; }
        } else if (has_eq && NAME_IS(name, 5, "vocab")) {
            st->flags |= F_VOCAB;
            goto rdfa;
        }
        return 0;
    case 6:
        if (NAME_IS(name, 6, "typeof")) {
            if (has_eq) { st->flags |= F_TYPEOF; st->c_typeof++; goto rdfa; }
            st->cut_last = at;
            return 1;
        }
        return 0;
    case 7:
        if (NAME_IS(name, 7, "itemref")) { st->flags |= F_REFS; st->cut_last = at; return 1; }
        if (NAME_IS(name, 7, "headers")) st->flags |= F_REFS;
        return 0;
    case 8:
        if (has_eq && NAME_IS(name, 8, "property")) { st->c_property++; goto rdfa; }
        if (NAME_IS(name, 8, "itemprop")) { st->cut_last = at; return 1; }
        return 0;
    case 9:
        if (NAME_IS(name, 9, "itemscope")) { st->flags |= F_ITEMSCOPE; st->dom_last = st->cut_last = at; return 1; }
        return 0;
    case 10:  /* microdata's default language: the last <meta http-equiv=content-language> (a value holding
                 '&' counts too: a character reference could spell it) */
        if (NAME_IS(name, 10, "http-equiv") && (qf_scan_contains_ci(v, vn, N_CONTENT_LANGUAGE) || memchr(v, '&', vn))) {
            st->cut_last = at;
            return 1;
        }
        return 0;
    case 16:
        if (NAME_IS(name, 16, "itemprop-reverse")) { st->flags |= F_REVERSE; st->cut_last = at; return 1; }
        return 0;
    default:
        return 0;
    }
rdfa:
    st->flags |= F_RDFA;
    st->rdfa_last = at;
    if (!(NAME_IS(tag, taglen, "meta") || NAME_IS(tag, taglen, "link")))
        st->flags |= F_RDFA_BODY;
    /* a <a rel> that is RDFa may be XFN too */
    if (!(nlen == 3 && taglen == 1 && lc(tag[0]) == 'a' && lc(name[2]) == 'l')) return 1;
    {
        unsigned long long m = qf_scan_match_tokens(v, vn, &st->rel, st->end);
        if (m == ~0ULL) return add_odd(st, at, "rel", tag, taglen, v, vn) ? -1 : 1;
        if (m) { st->flags |= F_XFN; st->dom_last = at; }
    }
    return 1;
xfn:
    {
        unsigned long long m = qf_scan_match_tokens(v, vn, &st->rel, st->end);
        if (m == ~0ULL) return add_odd(st, at, "rel", tag, taglen, v, vn) ? -1 : 1;
        if (m) { st->flags |= F_XFN; st->dom_last = at; return 1; }
    }
    return 0;
}

/* Attributes of a start tag whose name ends at p; returns where scanning goes on. A '<' among them is read
   both ways: as HTML5 (and libxml2 2.14) reads it, the start of an attribute name, the tag going on; and, once
   the tag is read, as the start of a tag of its own, over the same bytes (older parsers). */
static const unsigned char *start_tag(State *st, Py_ssize_t at, const unsigned char *tag, Py_ssize_t taglen,
                                      const unsigned char *p, const unsigned char *end, int *err) {
    const unsigned char *inner = NULL;  /* the first '<' among the attributes */
    while (p < end) {
        unsigned t, junk = 0;  /* T_JUNK: a control byte or a byte >= 0x80 passed over: to HTML5, (part of) a name */
        while (p < end && ((t = qf_scan_T[*p]) & T_SEP)) { junk |= t; p++; }
        if (p >= end) break;
        if (*p == '>') { p++; break; }
        if (*p == '<' && !inner) inner = p;
        const unsigned char *name = p;
        Py_ssize_t nlen = 0;
        const unsigned char *q = p;
        if (!((junk & T_JUNK) && *p == '=')) {  /* (else the '=' gives that name a value, as HTML5 reads it) */
            p++;  /* the first character belongs to the name, even '=' */
            while (p < end && !(qf_scan_T[*p] & T_NAMESTOP)) p++;
            nlen = p - name;
            q = p;  /* (HTML5 white space only: a control byte starts a name or a value) */
            while (q < end && (qf_scan_T[*q] & T_WS)) q++;
        }
        const unsigned char *v = p;
        Py_ssize_t vn = 0;
        int has_eq = 0;
        if (q < end && *q == '=') {
            has_eq = 1;
            q++;
            while (q < end && (qf_scan_T[*q] & T_WS)) q++;
            if (q < end && (*q == '"' || *q == '\'')) {
                const unsigned char *close = memchr(q + 1, *q, end - q - 1);
                v = q + 1;
                if (close) {
                    vn = close - v;
                    p = close + 1;
                    const unsigned char *lt;
                    if (vn && st->depth < 4 && (lt = next_lt(st, v)) && lt < close) {
                        st->depth++;
                        int r = scan_range(st, lt, close);  /* (from the value's first '<': the same) */
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
                while (q < end && !(qf_scan_T[*q] & T_VALSTOP)) q++;
                vn = q - v;
                p = q;
            }
        }
        if (nlen >= 3 && nlen <= 16) {
            int hit = attribute(st, at, tag, taglen, name, nlen, has_eq, v, vn);
            if (hit < 0) { *err = 1; return end; }
            if (hit) text_at(st, at, tag, taglen);
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
        const unsigned char *lt = next_lt(st, p);
        if (!lt || lt >= end) break;
        p = lt + 1;
        if (p >= end) break;
        Py_ssize_t at = lt - st->base;
        if (*p == '/') {  /* an end tag: only "</head" (a name of exactly those letters) matters, until found */
            if (st->head_end < 0 && end - p >= 5 && (p[1] | 0x20) == 'h' && (p[2] | 0x20) == 'e'
                    && (p[3] | 0x20) == 'a' && (p[4] | 0x20) == 'd' && (end - p == 5 || !(qf_scan_T[p[5]] & T_NAME)))
                st->head_end = at;
            continue;
        }
        if (!is_alpha(*p)) continue;
        const unsigned char *tag = p;
        while (p < end && (qf_scan_T[*p] & T_NAME)) p++;
        Py_ssize_t taglen = p - tag;
        st->tags++;
        if (taglen >= 4) {  /* (letters only below: c | 0x20 is the lower case of exactly the two) */
            unsigned char c0 = tag[0] | 0x20;
            if (c0 == 'b') {
                if (st->base_at < 0 && (tag[1] | 0x20) == 'a' && (tag[2] | 0x20) == 's' && (tag[3] | 0x20) == 'e')
                    st->base_at = at;  /* "<base", whatever follows */
                if (taglen == 4 && NAME_IS(tag, 4, "body")) {
                    if (st->head_end < 0) st->head_end = at;
                    st->body_last = at;
                }
            } else if ((c0 == 'h' && NAME_IS(tag, taglen, "html")) || (c0 == 'f' && NAME_IS(tag, taglen, "frameset"))) {
                st->root_last = at;
            } else if (c0 == 's' && (NAME_IS(tag, taglen, "script") || NAME_IS(tag, taglen, "style"))) {
                if (st->raw_n < RAW_MAX) st->raw_at[st->raw_n] = at;
                st->raw_n++;
            }
        }
        /* HTML5 (and libxml2 2.14) runs a tag name up to white space, '/' or '>': where the bytes after the
           name's letters could make the attributes read otherwise ("<p!x='": '=', '<', a quote, a control
           byte, a byte >= 0x80; or white space, then '='), they are read from both ends. (Other bytes, "<b;"
           in a script, are one attribute name to the first reading: the same.) */
        const unsigned char *html5 = p;
        unsigned odd = 0;
        while (html5 < end && !(qf_scan_T[*html5] & T_H5STOP)) odd |= qf_scan_T[*html5++];
        odd &= T_H5ODD;
        if (html5 != p && !odd) {  /* "<p! = property=…": white space, then '=', which HTML5 reads as a name */
            const unsigned char *e = html5;
            while (e < end && (qf_scan_T[*e] & T_WS)) e++;
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

static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *class_seq, *rel_seq;
    if (!PyArg_ParseTuple(args, "y*OO", &buf, &class_seq, &rel_seq)) return NULL;
    State st;
    memset(&st, 0, sizeof st);
    st.base = buf.buf;
    st.rdfa_last = st.dom_last = st.head_end = st.base_at = st.cut_last = st.root_last = st.body_last = -1;
    st.text_first = -1;
    if (qf_scan_tokens(class_seq, st.cls.tok, st.cls.len, &st.cls.n) < 0
            || qf_scan_tokens(rel_seq, st.rel.tok, st.rel.len, &st.rel.n) < 0) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    qf_scan_fill_filters(&st.cls);
    qf_scan_fill_filters(&st.rel);
    st.end = st.base + buf.len;
    st.lt_from = st.end;  /* (nothing cached yet: every other start asks memchr) */
    st.odd = PyList_New(0);
    if (!st.odd) { PyBuffer_Release(&buf); return NULL; }
    const unsigned char *p = buf.buf;
    int r = scan_range(&st, p, p + buf.len);
    PyBuffer_Release(&buf);
    if (r) { Py_DECREF(st.odd); return NULL; }
    /* raw_last: the last <script or <style before text_first (-1: none), all of them if too many to remember */
    Py_ssize_t bound = st.text_first < 0 ? buf.len : st.text_first, raw_last = -1;
    if (st.raw_n > RAW_MAX) raw_last = bound - 1;
    else
        for (int i = 0; i < st.raw_n; i++)
            if (st.raw_at[i] < bound && st.raw_at[i] > raw_last) raw_last = st.raw_at[i];
    PyObject *mask = PyLong_FromUnsignedLongLong(st.class_mask);
    if (!mask) { Py_DECREF(st.odd); return NULL; }
    return Py_BuildValue("(lNnnnn(nnnn)nNnnnn)", st.flags, mask, st.rdfa_last, st.dom_last, st.head_end, st.base_at,
                         st.c_property, st.c_typeof, st.c_rel, st.c_rev, st.tags, st.odd, st.cut_last, st.root_last,
                         st.body_last, raw_last);
}

static PyMethodDef methods[] = {
    {"raw_ranges", qf_scan_raw_ranges, METH_VARARGS, "raw_ranges(data, limit, head_only) -> [start, end, ...]: the "
     "script and style contents a parse may leave out (see quadfleet.worker.html.rawtext)."},
    {"utf8_valid", qf_scan_utf8_valid, METH_O, "utf8_valid(data) -> bool: whether bytes.decode('utf-8') would "
     "succeed."},
    {"scan", scan, METH_VARARGS, "scan(data, class_tokens, rel_tokens) -> (flags, class_mask, rdfa_last, dom_last, "
     "head_end, base_at, counts, tags, odd, cut_last, root_last, body_last, raw_last): the markup evidence of a "
     "page (see quadfleet.worker.html.evidence)."},
    {"gzip_member_at", qf_scan_gzip_member_at, METH_VARARGS, "gzip_member_at(data, lo, hi) -> int: the first gzip "
     "member header (1f 8b 08) starting in data[lo:hi - 1], or -1."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan",
                                    "The prefilter's one pass, UTF-8 validation and the gzip member search, in C.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__scan(void) {
    fill_tables();
    qf_scan_fill_needles();
    return PyModule_Create(&module);
}
