/* Where the JSON-LD script blocks of a decoded page lie: the forward scan of worker/html/blocks.py
   (iter_blocks_py), in C.

   The rules are exactly those of the Python scan (worker/html/blocks.py, iter_blocks_py), which the
   tests hold equal to this on every corpus page and on mutated ones: a comment hides markup up to "-->";
   the content of a raw-text element (script, style, textarea, title, xmp, iframe, noembed, noframes) is
   text up to its end tag; a start tag ends at the first ">" outside a quoted value. Names are matched as
   Python's re.IGNORECASE matches them on str ("i" also matches U+0130 and U+0131, "s" U+017F) and "\s" is
   str.isspace(), so that the decisions are the regexes' own. Works on the str's own storage (1, 2 or 4
   bytes per character): positions are character indices, no copy is made.

   Returns, for each <script> whose attribute text holds "&" or "ld+json" (ASCII case-insensitively: no
   other character lower-cases to one of those letters), (attrs start, attrs end, content start, content
   end), content end -1 for a script left open (it runs to the end of the page: Python stops there if its
   type is JSON-LD, else the scan goes on after its start tag, as the Python scan does). Python decides the
   type attribute itself.

   Below the scan, the second job of this module (the JSON-LD extractor's other hot loop): the one walk of a parsed
   plain schema.org block to its triples, schema_org_walk (worker/extractors/jsonld/fused.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const char *NAMES[] = {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes"};
#define N_NAMES 8

static inline int letter_eq(Py_UCS4 c, char l) {
    if (c < 128) return (c | 0x20) == (Py_UCS4)l;
    if (l == 'i') return c == 0x130 || c == 0x131;
    if (l == 's') return c == 0x17F;
    return 0;
}

static inline int lower_ascii(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') ? (int)(c + 32) : (int)c; }

/* kind UTF8 (0): the data are the bytes of valid UTF-8 text, positions are byte offsets. Every character the
   scan looks for is ASCII, and in UTF-8 an ASCII byte is always that character, so only the element names
   and the white space after them (where non-ASCII characters take part) decode a character. */
#define UTF8 0
#define READ(i) (kind == UTF8 ? (Py_UCS4)((const unsigned char *)data)[(i)] : PyUnicode_READ(kind, data, (i)))

/* The character at i and (in *len) how many positions it takes. */
static inline Py_UCS4 char_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t i, Py_ssize_t *len) {
    if (kind != UTF8) { *len = 1; return PyUnicode_READ(kind, data, i); }
    const unsigned char *s = data;
    unsigned char c = s[i];
    Py_ssize_t need = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3;
    if (i + need >= n) { *len = 1; return c; }  /* (cannot happen in valid UTF-8) */
    Py_UCS4 cp = need == 0 ? c : need == 1 ? (c & 0x1F) : need == 2 ? (c & 0x0F) : (c & 0x07);
    for (Py_ssize_t k = 1; k <= need; k++) cp = (cp << 6) | (s[i + k] & 0x3F);
    *len = need + 1;
    return cp;
}

/* How many positions NAMES[k] takes if the text at ``at`` starts with it, else 0. */
static inline Py_ssize_t name_at(int kind, const void *data, Py_ssize_t n, Py_ssize_t at, int k) {
    const char *name = NAMES[k];
    Py_ssize_t q = at, l;
    for (; *name; name++) {
        if (q >= n || !letter_eq(char_at(kind, data, n, q, &l), *name)) return 0;
        q += l;
    }
    return q - at;
}

static inline int bound(Py_UCS4 c) { return c == '/' || c == '>' || Py_UNICODE_ISSPACE(c); }

/* The next ASCII character ch at or after pos, -1 if none: memchr over the storage, whatever its width (a
   hit on a byte that is not the character's low byte, or of a wider character, is passed over). */
static inline Py_ssize_t find_char(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos, unsigned char ch) {
    if (pos >= n) return -1;
    const unsigned char *s = data;
    if (kind == PyUnicode_1BYTE_KIND || kind == UTF8) {
        const unsigned char *hit = memchr(s + pos, ch, (size_t)(n - pos));
        return hit ? hit - s : -1;
    }
    const Py_ssize_t w = kind;  /* bytes per character */
    const uint16_t one = 1;
    const Py_ssize_t low = *(const unsigned char *)&one ? 0 : w - 1;  /* where the low byte sits */
    const unsigned char *p = s + pos * w, *end = s + n * w;
    while (p < end) {
        const unsigned char *hit = memchr(p, ch, (size_t)(end - p));
        if (!hit) return -1;
        Py_ssize_t b = hit - s;
        if (b % w == low) {
            Py_ssize_t i = b / w;
            if (PyUnicode_READ(kind, data, i) == ch) return i;
        }
        p = hit + 1;
    }
    return -1;
}

static inline Py_ssize_t next_lt(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos) {
    return find_char(kind, data, n, pos, '<');
}

/* Whether a "<" followed by c may start a comment or a raw-text element's tag: "!", a name's first letter, or
   (in UTF-8) the lead byte of a character beyond ASCII (U+0130, U+0131 and U+017F match "i" and "s"). */
static inline int may_open(unsigned char c) {
    unsigned char l = c | 0x20;
    return c == '!' || l == 's' || l == 't' || l == 'x' || l == 'i' || l == 'n' || c >= 0x80;
}

#ifdef __SSE2__
/* Of the "<" in the sixteen bytes at s (the bits of lt), those followed by a byte may_open() lets through. */
static inline unsigned openings16(const unsigned char *s, unsigned lt) {
#define IS(v, c) _mm_cmpeq_epi8((v), _mm_set1_epi8(c))
    const __m128i next = _mm_loadu_si128((const __m128i *)(s + 1)), l = _mm_or_si128(next, _mm_set1_epi8(0x20));
    __m128i ok = _mm_or_si128(_mm_or_si128(IS(l, 's'), IS(l, 't')), _mm_or_si128(IS(l, 'x'), IS(l, 'i')));
    ok = _mm_or_si128(ok, _mm_or_si128(IS(l, 'n'), IS(next, '!')));
#undef IS
    ok = _mm_or_si128(ok, _mm_cmplt_epi8(next, _mm_setzero_si128()));  /* bytes 0x80 and up */
    return lt & (unsigned)_mm_movemask_epi8(ok);
}
#endif

/* For text of one byte per character (or UTF-8): the next "<" at or after pos that is followed by a character
   may_open() lets through, or by the end of the text; -1 if none. The main loop passes over every other "<" (most
   of a page's: div, a, span, end tags) without looking at them: 32 bytes at a time where SSE2 is. */
static Py_ssize_t next_opening(const unsigned char *s, Py_ssize_t n, Py_ssize_t pos) {
    Py_ssize_t i = pos;
#ifdef __SSE2__
    const __m128i lt = _mm_set1_epi8('<');
    for (; i + 33 <= n; i += 32) {  /* (the byte after the 32 is read too) */
        unsigned m0 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i)), lt));
        unsigned m1 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + i + 16)), lt));
        if (!(m0 | m1)) continue;
        if (m0 && (m0 = openings16(s + i, m0))) return i + __builtin_ctz(m0);
        if (m1 && (m1 = openings16(s + i + 16, m1))) return i + 16 + __builtin_ctz(m1);
    }
#endif
    for (; i < n; i++)
        if (s[i] == '<' && (i + 1 >= n || may_open(s[i + 1]))) return i;
    return -1;
}

/* The next "-->" at or after pos, -1 if none. */
static Py_ssize_t find_comment_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos) {
    for (Py_ssize_t i = find_char(kind, data, n, pos, '-'); i >= 0 && i + 2 < n;
         i = find_char(kind, data, n, i + 1, '-'))
        if (READ(i + 1) == '-' && READ(i + 2) == '>') return i;
    return -1;
}

/* The next "</NAME" followed by a boundary character or the end of the text, -1 if none. */
static Py_ssize_t find_close(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos, int k) {
    for (Py_ssize_t i = next_lt(kind, data, n, pos); i >= 0; i = next_lt(kind, data, n, i + 1)) {
        Py_ssize_t l, cl;
        if (i + 1 < n && READ(i + 1) == '/' && (l = name_at(kind, data, n, i + 2, k))
                && (i + 2 + l == n || bound(char_at(kind, data, n, i + 2 + l, &cl))))
            return i;
    }
    return -1;
}

/* The ">" ending a start tag whose attributes begin at pos (quoted values may hold ">"), -1 if none. */
static Py_ssize_t tag_end(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos) {
    Py_ssize_t i = pos;
    while (i < n) {
        Py_UCS4 c = READ(i);
        if (c == '>') return i;
        if (c == '"' || c == '\'') {
            Py_ssize_t j = find_char(kind, data, n, i + 1, (unsigned char)c);
            if (j < 0) return -1;
            i = j + 1;
        } else {
            i++;
        }
    }
    return -1;
}

static int holds_candidate(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    static const char lit[] = "ld+json";
    for (Py_ssize_t i = a; i < b; i++) {
        Py_UCS4 c = READ(i);
        if (c == '&') return 1;
        if (lower_ascii(c) == 'l' && i + 7 <= b) {
            Py_ssize_t j = 1;
            while (j < 7 && lower_ascii(READ(i + j)) == lit[j]) j++;
            if (j == 7) return 1;
        }
    }
    return 0;
}

static int add(PyObject *out, Py_ssize_t a0, Py_ssize_t a1, Py_ssize_t c0, Py_ssize_t c1) {
    PyObject *t = Py_BuildValue("(nnnn)", a0, a1, c0, c1);
    if (!t) return -1;
    int r = PyList_Append(out, t);
    Py_DECREF(t);
    return r;
}

/* (always inlined into the wrappers below, one per kind, so that each kind's scan is compiled for it: READ and
   find_char lose their tests of the kind) */
static inline __attribute__((always_inline)) PyObject *blocks(int kind, const void *data, Py_ssize_t n) {
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    /* Memos that keep hostile pages linear (a thousand unclosed "<style>", "<script" with no ">" after):
       where the last ">" is, and per element name the last end-tag search (from, found or -1). */
    Py_ssize_t last_gt = -1;
    for (Py_ssize_t i = n - 1; i >= 0; i--) if (READ(i) == '>') { last_gt = i; break; }
    Py_ssize_t close_from[N_NAMES], close_at[N_NAMES];
    for (int j = 0; j < N_NAMES; j++) close_from[j] = -1;
    Py_ssize_t pos = 0;
    while (pos < n) {
        /* the leftmost "<!--" or "<NAME" + boundary at or after pos */
        Py_ssize_t at = -1, len = 0;
        int k = -1;
        /* (one byte per character: only the "<" that may open something; else every "<") */
#define NEXT(p) (kind == UTF8 || kind == PyUnicode_1BYTE_KIND ? next_opening(data, n, (p)) \
                                                            : next_lt(kind, data, n, (p)))
        for (Py_ssize_t i = NEXT(pos); i >= 0; i = NEXT(i + 1)) {
#undef NEXT
            if (i + 1 >= n) break;  /* (nor can a comment start here) */
            Py_UCS4 c1 = READ(i + 1);
            if (c1 == '!') {
                if (i + 3 < n && READ(i + 2) == '-' && READ(i + 3) == '-') { at = i; break; }
                continue;
            }
            if (c1 >= 128) {
                Py_ssize_t l1;
                c1 = char_at(kind, data, n, i + 1, &l1);
            }
            int f = c1 < 128 ? lower_ascii(c1) : (c1 == 0x130 || c1 == 0x131) ? 'i' : c1 == 0x17F ? 's' : 0;
            /* only the names beginning with that letter can match (letter_eq: no character matches two letters),
               tried in NAMES' order */
            int j0, j1;
            switch (f) {
                case 's': j0 = 0; j1 = 2; break;  /* script, style */
                case 't': j0 = 2; j1 = 4; break;  /* textarea, title */
                case 'x': j0 = 4; j1 = 5; break;  /* xmp */
                case 'i': j0 = 5; j1 = 6; break;  /* iframe */
                case 'n': j0 = 6; j1 = 8; break;  /* noembed, noframes */
                default: continue;
            }
            for (int j = j0; j < j1; j++) {
                Py_ssize_t l = name_at(kind, data, n, i + 1, j), bl;
                if (l && i + 1 + l < n && bound(char_at(kind, data, n, i + 1 + l, &bl))) { k = j; len = l; break; }
            }
            if (k >= 0) { at = i; break; }
        }
        if (at < 0) break;
        if (k < 0) {  /* a comment; searching from "<!" makes "<!-->" and "<!--->" end at once */
            Py_ssize_t end = find_comment_end(kind, data, n, at + 2);
            if (end < 0) break;
            pos = end + 3;
            continue;
        }
        Py_ssize_t attrs = at + 1 + len;
        Py_ssize_t gt = attrs > last_gt ? -1 : tag_end(kind, data, n, attrs);
        if (gt < 0) { pos = attrs; continue; }
        Py_ssize_t start = gt + 1;
        Py_ssize_t close;
        if (close_from[k] >= 0 && start >= close_from[k] && (close_at[k] < 0 || close_at[k] >= start)) {
            close = close_at[k];  /* the same answer as searching again */
        } else {
            close = find_close(kind, data, n, start, k);
            close_from[k] = start;
            close_at[k] = close;
        }
        if (k == 0 && holds_candidate(kind, data, attrs, gt)) {
            if (add(out, attrs, gt, start, close) < 0) { Py_DECREF(out); return NULL; }
        }
        pos = close >= 0 ? close + 2 + name_at(kind, data, n, close + 2, k) : start;
    }
    return out;
}

static PyObject *jsonld_blocks(PyObject *self, PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "jsonld_blocks() takes a str");
        return NULL;
    }
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg);
    switch (PyUnicode_KIND(arg)) {
        case PyUnicode_1BYTE_KIND: return blocks(PyUnicode_1BYTE_KIND, data, n);
        case PyUnicode_2BYTE_KIND: return blocks(PyUnicode_2BYTE_KIND, data, n);
        default: return blocks(PyUnicode_4BYTE_KIND, data, n);
    }
}

/* The same on the bytes of valid UTF-8 text (the caller has checked): byte offsets, and no decoded copy of
   the page is needed to find its blocks. */
static PyObject *jsonld_blocks_utf8(PyObject *self, PyObject *arg) {
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *out = blocks(UTF8, buf.buf, buf.len);
    PyBuffer_Release(&buf);
    return out;
}

/* ---- The fused walk of worker/extractors/jsonld/fused.py (_Walk), in C ----

   schema_org_walk(data, base, prefix, tables) -> the triples fused.schema_org_triples makes of a parsed block,
   or None wherever this walk is not sure (then the Python walk, the definition, decides: it may still take the
   block, or decline it to the two-pass path). The steps are _Walk's own, in its order: keys sorted, a node's
   subject made when it is entered, a nested node's triples before the triple linking it, a dropped top-level
   node's label taken back. Whatever is not the common case is asked of Python through ``tables`` (the caches
   and the functions fused.py keeps): a key or type name not yet cached, a context string, an @id that is not
   "scheme://...", a number or boolean value. Any exception those raise (Decline, ...) makes the answer None. */

enum { T_PROPS, T_PROP_MISS, T_TYPES, T_TYPE_MISS, T_CONTEXTS, T_CONTEXT_OK, T_DOCUMENT_IRI, T_NUMBER, T_IRI,
       T_BNODE, T_LITERAL, T_RDF_TYPE, T_URL_TRIM, T_XSD_INTEGER, T_XSD_BOOLEAN, N_TABLES };
#define MAX_DEPTH 48
#define DECLINE (-2)  /* not sure: the answer is None (no Python error set) */

typedef struct {
    PyObject **t;       /* the tables' items (borrowed from the tables tuple) */
    PyObject *out;      /* the triples */
    PyObject *labels;   /* "_:x" -> its BNode, as _Walk.labels */
    PyObject *base, *prefix;
    Py_ssize_t issued;
} Walk;

static PyObject *S_AT_ID, *S_ID, *S_AT_TYPE, *S_TYPE, *S_AT_CONTEXT, *S_AT_GRAPH, *S_TRUE, *S_FALSE;
static PyObject *Declined;  /* raised inside the walk where _Walk raises Decline (or where this one is unsure) */

static PyObject *decline(void) { PyErr_SetNone(Declined); return NULL; }

/* tuple.__new__(Literal, (value, None, datatype)) */
static PyObject *literal(Walk *w, PyObject *value, PyObject *datatype) {
    PyTypeObject *type = (PyTypeObject *)w->t[T_LITERAL];
    PyObject *o = type->tp_alloc(type, 3);
    if (!o) return NULL;
    Py_INCREF(value); PyTuple_SET_ITEM(o, 0, value);
    Py_INCREF(Py_None); PyTuple_SET_ITEM(o, 1, Py_None);
    Py_INCREF(datatype); PyTuple_SET_ITEM(o, 2, datatype);
    return o;
}

/* _Walk.fresh: BNode(f"{prefix}{issued}"), the label written out directly where the prefix is ASCII (it is
   "<block number>b": PyUnicode_FromFormat cost more than the rest of the node). */
static PyObject *fresh(Walk *w) {
    PyObject *label;
    Py_ssize_t n = PyUnicode_GET_LENGTH(w->prefix);
    if (PyUnicode_IS_ASCII(w->prefix) && w->issued >= 0) {
        char digits[24];
        int d = 0;
        size_t v = (size_t)w->issued;
        do { digits[d++] = (char)('0' + v % 10); v /= 10; } while (v);
        label = PyUnicode_New(n + d, 127);
        if (!label) return NULL;
        Py_UCS1 *out = PyUnicode_1BYTE_DATA(label);
        memcpy(out, PyUnicode_1BYTE_DATA(w->prefix), (size_t)n);
        for (int k = 0; k < d; k++) out[n + k] = (Py_UCS1)digits[d - 1 - k];
    } else {
        label = PyUnicode_FromFormat("%U%zd", w->prefix, w->issued);
    }
    if (!label) return NULL;
    w->issued++;
    PyObject *node = PyObject_CallOneArg(w->t[T_BNODE], label);
    Py_DECREF(label);
    return node;
}

/* _Walk.resource: a relabelled blank node or a trimmed IRI. */
static PyObject *resource(Walk *w, PyObject *ref) {
    if (!PyUnicode_Check(ref)) return decline();
    Py_ssize_t n = PyUnicode_GET_LENGTH(ref);
    int kind = PyUnicode_KIND(ref);
    const void *data = PyUnicode_DATA(ref);
    if (n >= 2 && PyUnicode_READ(kind, data, 0) == '_' && PyUnicode_READ(kind, data, 1) == ':') {
        PyObject *label = PyDict_GetItemWithError(w->labels, ref);
        if (label) { Py_INCREF(label); return label; }
        if (PyErr_Occurred()) return NULL;
        label = fresh(w);
        if (!label || PyDict_SetItem(w->labels, ref, label) < 0) { Py_XDECREF(label); return NULL; }
        return label;
    }
    if (n && (PyUnicode_READ(kind, data, 0) <= ' ' || PyUnicode_READ(kind, data, n - 1) <= ' ')) {
        PyObject *trimmed = PyObject_CallMethod(ref, "strip", "O", w->t[T_URL_TRIM]);
        if (!trimmed) return NULL;
        PyObject *iri = PyObject_CallOneArg(w->t[T_IRI], trimmed);
        Py_DECREF(trimmed);
        return iri;
    }
    return PyObject_CallOneArg(w->t[T_IRI], ref);
}

/* _Walk.ref: an @id (or @id-coerced) value's term. */
static PyObject *ref(Walk *w, PyObject *value) {
    if (PyUnicode_CheckExact(value)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(value);
        int kind = PyUnicode_KIND(value);
        const void *data = PyUnicode_DATA(value);
        Py_ssize_t colon = -1;
        for (Py_ssize_t i = 0; i < n; i++) if (PyUnicode_READ(kind, data, i) == ':') { colon = i; break; }
        if (colon > 0 && colon + 2 < n && PyUnicode_READ(kind, data, colon + 1) == '/'
                && PyUnicode_READ(kind, data, colon + 2) == '/' && PyUnicode_READ(kind, data, n - 1) > ' ') {
            Py_UCS4 first = PyUnicode_READ(kind, data, 0);
            if (first > ' ' && first != '@' && first != '_') return PyObject_CallOneArg(w->t[T_IRI], value);
        }
    }
    PyObject *iri = PyObject_CallFunctionObjArgs(w->t[T_DOCUMENT_IRI], value, w->base, NULL);
    if (!iri) return NULL;
    PyObject *term = resource(w, iri);
    Py_DECREF(iri);
    return term;
}

static int emit(Walk *w, PyObject *s, PyObject *p, PyObject *o) {
    PyObject *t = PyTuple_Pack(3, s, p, o);
    if (!t) return -1;
    int r = PyList_Append(w->out, t);
    Py_DECREF(t);
    return r;
}

static int is(PyObject *s, const char *what) {
    return PyUnicode_Check(s) && PyUnicode_CompareWithASCIIString(s, what) == 0;
}

/* _flat: the items of nested arrays in order, appended to items. */
static int flat(PyObject *values, PyObject *items, int depth) {
    if (depth > MAX_DEPTH) return DECLINE;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
        PyObject *v = PyList_GET_ITEM(values, i);
        int r = PyList_CheckExact(v) ? flat(v, items, depth + 1) : PyList_Append(items, v);
        if (r < 0) return r;
    }
    return 0;
}

static PyObject *node(Walk *w, PyObject *obj, int top, int nested, int depth);

/* _number(v, None): a boolean's or an integer's literal as value_literal makes it with no datatype given (an
   integer of 64 bits at most: value_literal's 1e21 bound is beyond); any other value is Python's to make. */
static PyObject *plain_number(Walk *w, PyObject *v) {
    if (v == Py_True || v == Py_False) return literal(w, v == Py_True ? S_TRUE : S_FALSE, w->t[T_XSD_BOOLEAN]);
    if (PyLong_CheckExact(v)) {
        int overflow;
        PyLong_AsLongLongAndOverflow(v, &overflow);
        if (!overflow) {
            if (PyErr_Occurred()) return NULL;
            PyObject *text = PyObject_Str(v);
            if (!text) return NULL;
            PyObject *o = literal(w, text, w->t[T_XSD_INTEGER]);
            Py_DECREF(text);
            return o;
        }
    }
    return PyObject_CallFunctionObjArgs(w->t[T_NUMBER], v, Py_None, NULL);
}

/* The object of one value v of a property (NULL with no error: nothing, a None value). */
static int value_triple(Walk *w, PyObject *subject, PyObject *predicate, PyObject *coerce, PyObject *v, int depth) {
    PyObject *o;
    if (PyUnicode_CheckExact(v)) {
        if (coerce == Py_None) o = literal(w, v, Py_None);
        else if (is(coerce, "@id")) o = ref(w, v);
        else o = literal(w, v, coerce);
    } else if (PyDict_CheckExact(v)) {
        if (PyDict_GET_SIZE(v) == 0) return DECLINE;
        o = node(w, v, 0, 1, depth + 1);
    } else if (v == Py_None) {
        return 0;
    } else if (coerce == Py_None || is(coerce, "@id")) {
        o = plain_number(w, v);
    } else {
        o = PyObject_CallFunctionObjArgs(w->t[T_NUMBER], v, coerce, NULL);
    }
    if (!o) return -1;
    int r = emit(w, subject, predicate, o);
    Py_DECREF(o);
    return r;
}

static int context_ok(Walk *w, PyObject *value) {
    PyObject *found = PyDict_GetItemWithError(w->t[T_CONTEXTS], value);
    if (!found) {
        if (PyErr_Occurred()) return -1;
        found = PyObject_CallOneArg(w->t[T_CONTEXT_OK], value);
        if (!found) return -1;
        int r = PyObject_IsTrue(found);
        Py_DECREF(found);
        return r;
    }
    return PyObject_IsTrue(found);
}

/* A keyword key's value (@type, @context, @id and their aliases); 1 if it made a triple. */
static int keyword(Walk *w, PyObject *subject, PyObject *coerce, PyObject *value, int top) {
    if (is(coerce, "@type")) {
        int list = PyList_CheckExact(value), kept = 0;
        Py_ssize_t n = list ? PyList_GET_SIZE(value) : 1;
        for (Py_ssize_t i = 0; i < n && i < (list ? PyList_GET_SIZE(value) : 1); i++) {
            PyObject *v = list ? PyList_GET_ITEM(value, i) : value, *iri;
            if (!PyUnicode_CheckExact(v)) return DECLINE;
            iri = PyDict_GetItemWithError(w->t[T_TYPES], v);
            if (iri && iri != Py_None) {
                Py_INCREF(iri);
            } else {
                if (PyErr_Occurred()) return -1;
                Py_INCREF(v);
                iri = PyObject_CallOneArg(w->t[T_TYPE_MISS], v);
                Py_DECREF(v);
                if (!iri) return -1;
            }
            int r = emit(w, subject, w->t[T_RDF_TYPE], iri);
            Py_DECREF(iri);
            if (r < 0) return r;
            kept = 1;
        }
        return kept;
    }
    if (is(coerce, "@context")) {
        if (top) return 0;
        if (!PyUnicode_CheckExact(value)) return DECLINE;
        int r = context_ok(w, value);
        return r < 0 ? r : r ? 0 : DECLINE;
    }
    return is(coerce, "@id") ? 0 : DECLINE;
}

/* One property's triples; 1 if it kept the node (made a triple or was a list), 0 if not. */
static int property(Walk *w, PyObject *subject, PyObject *predicate, PyObject *coerce, PyObject *value, int depth) {
    if (coerce == Py_None && PyUnicode_CheckExact(value)) {
        PyObject *o = literal(w, value, Py_None);
        if (!o) return -1;
        int r = emit(w, subject, predicate, o);
        Py_DECREF(o);
        return r < 0 ? r : 1;
    }
    if (!PyList_CheckExact(value)) {
        int r = value_triple(w, subject, predicate, coerce, value, depth);
        return r < 0 ? r : value == Py_None ? 0 : 1;
    }
    PyObject *items = value;
    Py_INCREF(items);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
        if (PyList_CheckExact(PyList_GET_ITEM(value, i))) {
            Py_DECREF(items);
            items = PyList_New(0);
            if (!items) return -1;
            int r = flat(value, items, depth + 1);
            if (r < 0) { Py_DECREF(items); return r; }
            break;
        }
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *v = PyList_GET_ITEM(items, i);
        Py_INCREF(v);
        int r = value_triple(w, subject, predicate, coerce, v, depth);
        Py_DECREF(v);
        if (r < 0) { Py_DECREF(items); return r; }
    }
    Py_DECREF(items);
    return 1;
}

static int contains(PyObject *d, PyObject *key) { return PyDict_Contains(d, key); }

/* _Walk.node: a new reference to the node's subject; NULL with no error set for a top-level node pyld drops;
   NULL with an error set otherwise (a decline is the private exception Declined). */
static PyObject *node(Walk *w, PyObject *obj, int top, int nested, int depth) {
    int has_type = contains(obj, S_AT_TYPE), has_alias = contains(obj, S_TYPE);
    int has_at_id = contains(obj, S_AT_ID), has_id = contains(obj, S_ID);
    if (has_type < 0 || has_alias < 0 || has_at_id < 0 || has_id < 0) return NULL;
    if (depth > MAX_DEPTH || (has_type && has_alias) || (has_at_id && has_id)) return decline();
    PyObject *id = has_id ? PyDict_GetItemWithError(obj, S_ID) : has_at_id ? PyDict_GetItemWithError(obj, S_AT_ID)
                                                                             : NULL;
    if ((has_id || has_at_id) && !id) return PyErr_Occurred() ? NULL : decline();
    PyObject *subject = id ? ref(w, id) : fresh(w);
    if (!subject) return NULL;
    PyObject *keys = PyDict_Keys(obj);
    if (!keys || PyList_Sort(keys) < 0) { Py_XDECREF(keys); Py_DECREF(subject); return NULL; }
    int kept = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *key = PyList_GET_ITEM(keys, i);
        PyObject *value = PyDict_GetItemWithError(obj, key);
        if (!value) { if (!PyErr_Occurred()) decline(); goto fail; }
        Py_INCREF(value);
        PyObject *found = PyDict_GetItemWithError(w->t[T_PROPS], key);
        if (found) Py_INCREF(found);
        else if (!PyErr_Occurred()) found = PyObject_CallOneArg(w->t[T_PROP_MISS], key);
        if (!found || !PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 2) {
            Py_DECREF(value); Py_XDECREF(found);
            if (!PyErr_Occurred()) decline();
            goto fail;
        }
        PyObject *predicate = PyTuple_GET_ITEM(found, 0), *coerce = PyTuple_GET_ITEM(found, 1);
        int r;
        if (coerce != Py_None && !PyUnicode_Check(coerce)) r = DECLINE;
        else if (predicate == Py_None) r = keyword(w, subject, coerce, value, top);
        else r = property(w, subject, predicate, coerce, value, depth);
        Py_DECREF(value); Py_DECREF(found);
        if (r == DECLINE) { decline(); goto fail; }
        if (r < 0) goto fail;
        kept |= r;
    }
    Py_DECREF(keys);
    if (kept || (nested && id)) return subject;
    Py_DECREF(subject);
    if (nested) return decline();
    return NULL;  /* a top-level node with nothing but (at most) an @id: pyld drops it */
fail:
    Py_DECREF(keys);
    Py_DECREF(subject);
    return NULL;
}

/* _Walk.top */
static int top_node(Walk *w, PyObject *obj, int top) {
    Py_ssize_t issued = w->issued, known = PyDict_GET_SIZE(w->labels);
    PyObject *subject = node(w, obj, top, 0, 1);
    if (subject) { Py_DECREF(subject); return 0; }
    if (PyErr_Occurred()) return -1;
    w->issued = issued;
    if (PyDict_GET_SIZE(w->labels) > known) {
        PyObject *r = PyObject_CallMethod(w->labels, "popitem", NULL);
        if (!r) return -1;
        Py_DECREF(r);
    }
    return 0;
}

/* _Walk.block */
static int block(Walk *w, PyObject *data, int depth) {
    if (PyList_CheckExact(data)) {
        if (depth > MAX_DEPTH) { decline(); return -1; }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(data); i++) {
            PyObject *e = PyList_GET_ITEM(data, i);
            if (PyDict_CheckExact(e) || PyList_CheckExact(e)) {
                Py_INCREF(e);
                int r = block(w, e, depth + 1);
                Py_DECREF(e);
                if (r < 0) return r;
            }
        }
        return 0;
    }
    if (!PyDict_CheckExact(data)) { decline(); return -1; }
    PyObject *context = PyDict_GetItemWithError(data, S_AT_CONTEXT);
    if (!context) { if (!PyErr_Occurred()) decline(); return -1; }
    if (!PyUnicode_CheckExact(context)) { decline(); return -1; }
    Py_INCREF(context);
    int ok = context_ok(w, context);
    Py_DECREF(context);
    if (ok <= 0) { if (ok == 0) decline(); return -1; }
    PyObject *graph = PyDict_GetItemWithError(data, S_AT_GRAPH);
    if (!graph) return PyErr_Occurred() ? -1 : top_node(w, data, 1);
    if (PyDict_GET_SIZE(data) != 2 || (!PyList_CheckExact(graph) && !PyDict_CheckExact(graph))) {
        decline();
        return -1;
    }
    Py_INCREF(graph);
    int r = 0;
    if (PyDict_CheckExact(graph)) {
        r = top_node(w, graph, 0);
    } else {
        for (Py_ssize_t i = 0; r == 0 && i < PyList_GET_SIZE(graph); i++) {
            PyObject *obj = PyList_GET_ITEM(graph, i);
            if (obj == Py_None) continue;
            if (!PyDict_CheckExact(obj)) { decline(); r = -1; break; }
            Py_INCREF(obj);
            r = top_node(w, obj, 0);
            Py_DECREF(obj);
        }
    }
    Py_DECREF(graph);
    return r;
}

static PyObject *schema_org_walk(PyObject *self, PyObject *args) {
    PyObject *data, *base, *prefix, *tables;
    if (!PyArg_ParseTuple(args, "OOOO!", &data, &base, &prefix, &PyTuple_Type, &tables)) return NULL;
    if (!PyUnicode_CheckExact(prefix)) Py_RETURN_NONE;  /* (labels: fresh) */
    if (PyTuple_GET_SIZE(tables) != N_TABLES) {
        PyErr_SetString(PyExc_ValueError, "schema_org_walk: tables of the wrong size");
        return NULL;
    }
    if (!PyDict_CheckExact(PyTuple_GET_ITEM(tables, T_PROPS)) || !PyDict_CheckExact(PyTuple_GET_ITEM(tables, T_TYPES))
            || !PyDict_CheckExact(PyTuple_GET_ITEM(tables, T_CONTEXTS))
            || !PyType_Check(PyTuple_GET_ITEM(tables, T_LITERAL))
            || !PyType_IsSubtype((PyTypeObject *)PyTuple_GET_ITEM(tables, T_LITERAL), &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "schema_org_walk: tables of the wrong kinds");
        return NULL;
    }
    Walk w = {&PyTuple_GET_ITEM(tables, 0), PyList_New(0), PyDict_New(), base, prefix, 0};
    if (!w.out || !w.labels) { Py_XDECREF(w.out); Py_XDECREF(w.labels); return NULL; }
    int r = block(&w, data, 0);
    Py_DECREF(w.labels);
    if (r < 0) {
        Py_DECREF(w.out);
        if (PyErr_ExceptionMatches(PyExc_Exception)) { PyErr_Clear(); Py_RETURN_NONE; }  /* (Declined too) */
        return NULL;
    }
    return w.out;
}


static PyMethodDef methods[] = {
    {"jsonld_blocks", jsonld_blocks, METH_O,
     "jsonld_blocks(text) -> [(attrs_start, attrs_end, content_start, content_end or -1)]: the candidate "
     "JSON-LD script blocks of a page (see quadfleet.worker.html.blocks)."},
    {"jsonld_blocks_utf8", jsonld_blocks_utf8, METH_O,
     "jsonld_blocks_utf8(data) -> the same for the bytes of valid UTF-8 text, in byte offsets."},
    {"schema_org_walk", schema_org_walk, METH_VARARGS,
     "schema_org_walk(data, base, prefix, tables) -> the triples of a plain schema.org block, or None "
     "(see quadfleet.worker.extractors.jsonld.fused)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blocks",
                                    "JSON-LD in C: finding a page's blocks, and the one walk of plain schema.org ones.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__blocks(void) {
    S_AT_ID = PyUnicode_InternFromString("@id");
    S_ID = PyUnicode_InternFromString("id");
    S_AT_TYPE = PyUnicode_InternFromString("@type");
    S_TYPE = PyUnicode_InternFromString("type");
    S_AT_CONTEXT = PyUnicode_InternFromString("@context");
    S_AT_GRAPH = PyUnicode_InternFromString("@graph");
    S_TRUE = PyUnicode_InternFromString("true");
    S_FALSE = PyUnicode_InternFromString("false");
    Declined = PyErr_NewException("_blocks.Declined", PyExc_Exception, NULL);
    if (!S_AT_ID || !S_ID || !S_AT_TYPE || !S_TYPE || !S_AT_CONTEXT || !S_AT_GRAPH || !S_TRUE || !S_FALSE
            || !Declined) return NULL;
    return PyModule_Create(&module);
}
