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

   The module's second job (the JSON-LD extractor's other hot loop), the one walk of a parsed plain schema.org block
   to its triples (schema_org_walk, worker/extractors/jsonld/fused.py), is in _blocks_walk.c. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_blocks.h"
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



static PyMethodDef methods[] = {
    {"jsonld_blocks", jsonld_blocks, METH_O,
     "jsonld_blocks(text) -> [(attrs_start, attrs_end, content_start, content_end or -1)]: the candidate "
     "JSON-LD script blocks of a page (see quadfleet.worker.html.blocks)."},
    {"jsonld_blocks_utf8", jsonld_blocks_utf8, METH_O,
     "jsonld_blocks_utf8(data) -> the same for the bytes of valid UTF-8 text, in byte offsets."},
    {"schema_org_walk", qf_schema_org_walk, METH_VARARGS,
     "schema_org_walk(data, base, prefix, tables) -> the triples of a plain schema.org block, or None "
     "(see quadfleet.worker.extractors.jsonld.fused)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blocks",
                                    "JSON-LD in C: finding a page's blocks, and the one walk of plain schema.org ones.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__blocks(void) {
    if (qf_schema_org_walk_init() < 0) return NULL;
    return PyModule_Create(&module);
}
