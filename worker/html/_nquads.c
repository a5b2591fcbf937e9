/* quadfleet.worker.html._nquads: one N-Quads line built in C from terms the page's serializer has already
 * made, or None where the Python serializer (quadfleet.worker.rdf.nquads.Serializer.line, the definition) must
 * decide.
 *
 * Why: a page's triples repeat their subjects and predicates, so Serializer.line mostly looks terms up in its
 * per-page cache and formats a string; in Python that is about a microsecond a triple, 4-5% of an extraction
 * of real pages. Here the same lookups and the same string, for the common case only: every term already in
 * the caches (the page's, the process's language tags and IRIs; a blank node with a plain label is made here)
 * and a literal, escaped here as nquads.literal escapes it. Anything else (an IRI new to the process, a term to
 * drop, a noise predicate) returns None
 * and the Python serializer answers, filling its caches, so the next triple with those terms is made here.
 * (Beside the native loader, worker/html/native.py, which loads every accelerator: worker/rdf is above
 * worker/html and may not import it.)
 *
 * setup(IRI, BNode, Literal, LANG_TAGS, IRI_CACHE, NOISE_NAMESPACES, XSD_STRING): the term types and the
 *   serializer's process-wide caches (the same dict objects, which it empties in place), once.
 * line(cache, graph, prefix, s, p, o, keep_all) -> str | None: what Serializer.line(s, p, o) returns for the
 *   serializer whose per-page cache is ``cache``, graph term ``graph``, blank node prefix ``prefix`` and
 *   keep_all_predicates ``keep_all``; or None. Like Serializer.term, it stores in ``cache`` the IRIs it finds in
 *   IRI_CACHE and the blank nodes it makes.
 * collect(triples, cache, graph, prefix, keep_all, slow_line, rdf_type, canonical) -> (lines, types, preds):
 *   worker/pipeline/pagequads.py's loop over one extractor's triples (collect_py there is the definition, and
 *   the tests hold the two equal): each triple's line from line() or else slow_line(s, p, o) (the page's
 *   Serializer.line), lines in first-seen order without repeats, and for each line kept the subject's classes
 *   (canonical(o) for an IRI object of an rdf_type triple, None for another object) or its predicates. The
 *   interpreted loop cost about a quarter of a microsecond a triple (run_extractor's time beyond the
 *   extractor's own on the crawl mix's 17,600 triples: 29 ms in Python, 25 ms here). Repeats are found by a table
 *   of its own (line_set) rather than a dict, and ``canonical`` may be the process's memo dict itself (read
 *   without a call, a miss its subscript): 14% fewer instructions in run_extractor on the crawl mix.
 * tally(types, preds, canonical, classes, props): worker/pipeline/pagequads.py's tally_py (the definition) over
 *   collect's types and preds: each typed subject counted under each of its IRI classes in ``classes``, and under
 *   each (class, canonical(predicate)) pair in ``props``, in the same order. In Python, a loop with a set per
 *   subject, it was most of run_extractor's own time (up to hundreds of typed subjects on a page).
 *
 * Two source files, one module: this one holds the module, setup(), the terms and the line of one triple (line);
 * _nquads_collect.c the per-page gathering over those lines (collect, tally, and collect's table of lines seen).
 * What crosses between them is declared in _nquads.h.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include "_nquads.h"

PyObject *qf_nq_iri_type;  /* (declared in _nquads.h: collect() tells an IRI object by it) */
static PyObject *bnode_type, *literal_type, *lang_tags, *iri_cache, *noise, *xsd_string;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *iri, *bnode, *literal, *tags, *iris, *noise_prefixes, *xsd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!U", &PyType_Type, &iri, &PyType_Type, &bnode, &PyType_Type, &literal,
                          &PyDict_Type, &tags, &PyDict_Type, &iris, &PyTuple_Type, &noise_prefixes, &xsd))
        return NULL;
    PyObject *olds[] = {qf_nq_iri_type, bnode_type, literal_type, lang_tags, iri_cache, noise, xsd_string};
    Py_INCREF(iri);
    Py_INCREF(bnode);
    Py_INCREF(literal);
    Py_INCREF(tags);
    Py_INCREF(iris);
    Py_INCREF(noise_prefixes);
    Py_INCREF(xsd);
    qf_nq_iri_type = iri;
    bnode_type = bnode;
    literal_type = literal;
    lang_tags = tags;
    iri_cache = iris;
    noise = noise_prefixes;
    xsd_string = xsd;
    for (int i = 0; i < 7; i++) Py_XDECREF(olds[i]);
    Py_RETURN_NONE;
}

/* Which code points below 256 a literal's value cannot hold as they are (nquads._LIT_BAD), set at import. */
static unsigned char lit_bad_low[256];

static inline int lit_bad(Py_UCS4 c) {
    return c < 256 ? lit_bad_low[c] : (c == 0x2028 || c == 0x2029 || (c >= 0xd800 && c <= 0xdfff));
}

/* The index of the first character of a literal's value that nquads._LIT_BAD matches, or -1 if it can be written
 * between quotes as it is. One loop per string kind: long literals (descriptions, article bodies) are most of a
 * page's characters, and the generic PyUnicode_READ costs a switch a character. */
static Py_ssize_t first_bad(PyObject *value) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    int kind = PyUnicode_KIND(value);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *c = PyUnicode_1BYTE_DATA(value);
        Py_ssize_t i = 0;
#ifdef __SSE2__
        /* 16 characters a step: below 0x20, '"', '\\' or 0x7f-0x9f (lit_bad_low's set), by unsigned saturation */
        const __m128i lo = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'),
                      del = _mm_set1_epi8(0x7f), span = _mm_set1_epi8(0x20), zero = _mm_setzero_si128();
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(c + i));
            __m128i bad = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(_mm_subs_epu8(v, lo), zero), _mm_cmpeq_epi8(v, quote)),
                _mm_or_si128(_mm_cmpeq_epi8(v, slash),
                             _mm_cmpeq_epi8(_mm_subs_epu8(_mm_sub_epi8(v, del), span), zero)));
            int mask = _mm_movemask_epi8(bad);
            if (mask) return i + __builtin_ctz((unsigned)mask);
        }
#endif
        for (; i < n; i++)
            if (lit_bad_low[c[i]]) return i;
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *c = PyUnicode_2BYTE_DATA(value);
        for (Py_ssize_t i = 0; i < n; i++)
            if (lit_bad(c[i])) return i;
    } else {
        const Py_UCS4 *c = PyUnicode_4BYTE_DATA(value);
        for (Py_ssize_t i = 0; i < n; i++)
            if (lit_bad(c[i])) return i;
    }
    return -1;
}

/* The escape of one character _LIT_BAD matches (nquads._lit_escape): a short escape, U+FFFD for a surrogate, else
 * \uXXXX; written at ``out`` (if not NULL), its length returned. */
static int escape_one(Py_UCS4 c, Py_UCS4 *out) {
    static const char hex[] = "0123456789ABCDEF";
    char short_form = c == '"' ? '"' : c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't'
                    : c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
    if (short_form) {
        if (out) out[0] = '\\', out[1] = (Py_UCS4)short_form;
        return 2;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
        if (out) out[0] = 0xfffd;
        return 1;
    }
    if (out) {
        out[0] = '\\', out[1] = 'u';
        for (int i = 0; i < 4; i++) out[2 + i] = (Py_UCS4)hex[(c >> (12 - 4 * i)) & 0xf];
    }
    return 6;
}

/* A literal's value escaped as nquads.literal escapes it (a new reference), ``first`` being its first character to
 * escape: the triples whose literal holds a line break or a quote no longer go to the Python serializer (a
 * regular expression with a Python callback per match, the bulk of the slow path's cost on real pages). */
static PyObject *escaped(PyObject *value, Py_ssize_t first) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(value), len = first;
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    if (kind == PyUnicode_1BYTE_KIND) {  /* (most escaped values: written byte by byte, no UCS4 copy to narrow) */
        const Py_UCS1 *c = data;
        Py_UCS4 high = 0;  /* (the characters kept as they are: an escaped C1 control may leave the result ASCII) */
        for (Py_ssize_t i = 0; i < first; i++) high |= c[i];
        for (Py_ssize_t i = first; i < n; i++) {
            if (lit_bad_low[c[i]]) {
                len += escape_one(c[i], NULL);
            } else {
                len++;
                high |= c[i];
            }
        }
        PyObject *out = PyUnicode_New(len, high & 0x80 ? 0xff : 0x7f);
        if (out == NULL) return NULL;
        Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
        Py_UCS4 esc[6];
        memcpy(to, c, (size_t)first);
        Py_ssize_t at = first;
        for (Py_ssize_t i = first; i < n; i++) {
            if (!lit_bad_low[c[i]]) {
                to[at++] = c[i];
                continue;
            }
            int k = escape_one(c[i], esc);  /* (ASCII: a short escape or \\u00XX) */
            for (int j = 0; j < k; j++) to[at++] = (Py_UCS1)esc[j];
        }
        return out;
    }
    for (Py_ssize_t i = first; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        len += lit_bad(c) ? escape_one(c, NULL) : 1;
    }
    Py_UCS4 *buf = PyMem_Malloc((size_t)(len ? len : 1) * sizeof(Py_UCS4));
    if (buf == NULL) return PyErr_NoMemory();
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (i >= first && lit_bad(c))
            at += escape_one(c, buf + at);
        else
            buf[at++] = c;
    }
    PyObject *out = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);  /* (narrowed to its kind) */
    PyMem_Free(buf);
    return out;
}

static PyObject *s_quote, *s_at, *s_caret, *s_space, *s_end;  /* '"', '"@', '"^^', ' ', ' .\n' */

/* The parts joined in one string (PyUnicode_FromFormat parses its format and grows a writer: about twice
 * the time, for lines that are nearly all ASCII). Nearly every line is all Latin-1: copied byte by byte where a
 * part is short (the spaces and quotes between terms; a call to memcpy costs more than the copy). */
static PyObject *join(PyObject *const *parts, int n) {
    Py_ssize_t len = 0;
    Py_UCS4 maxchar = 0;
    for (int i = 0; i < n; i++) {
        len += PyUnicode_GET_LENGTH(parts[i]);
        if (!PyUnicode_IS_ASCII(parts[i])) {
            Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(parts[i]);
            if (m > maxchar) maxchar = m;
        }
    }
    PyObject *out = PyUnicode_New(len, maxchar ? maxchar : 127);
    if (out == NULL) return NULL;
    if (maxchar < 256) {  /* (every part then of the 1-byte kind too) */
        Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
        for (int i = 0; i < n; i++) {
            Py_ssize_t k = PyUnicode_GET_LENGTH(parts[i]);
            const Py_UCS1 *from = PyUnicode_1BYTE_DATA(parts[i]);
            if (k <= 8) {
                for (Py_ssize_t j = 0; j < k; j++) to[j] = from[j];
            } else {
                memcpy(to, from, (size_t)k);
            }
            to += k;
        }
        return out;
    }
    int kind = PyUnicode_KIND(out);
    Py_ssize_t at = 0;
    for (int i = 0; i < n; i++) {
        Py_ssize_t k = PyUnicode_GET_LENGTH(parts[i]);
        if (PyUnicode_KIND(parts[i]) == kind) {
            memcpy((char *)PyUnicode_DATA(out) + at * kind, PyUnicode_DATA(parts[i]), (size_t)(k * kind));
        } else if (PyUnicode_CopyCharacters(out, at, parts[i], 0, k) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        at += k;
    }
    return out;
}

/* The serialized literal's parts in ``parts`` (borrowed: the literal's own strings and the constants above, but
 * for an escaped value, a new reference left in ``*owned`` for the caller to release), and how many (3 or 4: '"',
 * value, then '"' alone or '"@' tag / '"^^' datatype); 0 with no error set where Python must decide, -1 with an
 * error. */
static int literal(PyObject *o, PyObject **parts, PyObject **owned) {
    if (PyTuple_GET_SIZE(o) != 3) return 0;
    PyObject *value = PyTuple_GET_ITEM(o, 0), *lang = PyTuple_GET_ITEM(o, 1), *datatype = PyTuple_GET_ITEM(o, 2);
    if (!PyUnicode_CheckExact(value)) return 0;
    int k = 0;
    if (lang != Py_None) {
        if (!PyUnicode_Check(lang)) return 0;
        if (PyUnicode_GET_LENGTH(lang) > 0) {
            PyObject *tag = PyDict_GetItemWithError(lang_tags, lang);  /* borrowed */
            if (tag == NULL) return PyErr_Occurred() ? -1 : 0;  /* not seen yet (or an error, passed on) */
            if (tag != Py_None) {
                if (!PyUnicode_Check(tag)) return 0;
                if (PyUnicode_GET_LENGTH(tag) > 0) {
                    parts[2] = s_at;
                    parts[3] = tag;
                    k = 4;
                }
            }
        }
    }
    if (!k && datatype != Py_None) {
        if (!PyUnicode_Check(datatype)) return 0;
        if (PyUnicode_GET_LENGTH(datatype) > 0) {
            int same = PyUnicode_Compare(datatype, xsd_string);
            if (same == -1 && PyErr_Occurred()) return -1;
            if (same != 0) {
                PyObject *dt = PyDict_GetItemWithError(iri_cache, datatype);  /* borrowed */
                if (dt == NULL) return PyErr_Occurred() ? -1 : 0;  /* not seen: Python */
                if (!PyUnicode_Check(dt)) return 0;  /* not an IRI: Python */
                parts[2] = s_caret;
                parts[3] = dt;
                k = 4;
            }
        }
    }
    if (!k) {
        parts[2] = s_quote;
        k = 3;
    }
    parts[0] = s_quote;
    Py_ssize_t bad = first_bad(value);
    if (bad < 0) {
        parts[1] = value;
    } else {
        *owned = escaped(value, bad);
        if (*owned == NULL) return -1;
        parts[1] = *owned;
    }
    return k;
}

/* Whether a blank node label is all [A-Za-z0-9] (what the serializer's _BNODE_BAD would leave as it is). */
static int plain_label(PyObject *label) {
    if (!PyUnicode_IS_ASCII(label)) return 0;
    const Py_UCS1 *c = PyUnicode_1BYTE_DATA(label);
    for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(label); i < n; i++)
        if (!((c[i] >= '0' && c[i] <= '9') || (c[i] >= 'A' && c[i] <= 'Z') || (c[i] >= 'a' && c[i] <= 'z'))) return 0;
    return 1;
}

/* A subject's, predicate's or IRI object's serialization (borrowed), as Serializer.term makes it: from the page's
 * cache, else an IRI from the process's IRI_CACHE or a blank node with a plain label, stored in the page's cache
 * as term() stores it; NULL where Python must decide (a term dropped, or not seen yet). */
static PyObject *term(PyObject *cache, PyObject *t, PyObject *prefix) {
    PyObject *out = PyDict_GetItemWithError(cache, t);
    if (out != NULL) return PyUnicode_Check(out) ? out : NULL;
    if (PyErr_Occurred()) return NULL;
    PyTypeObject *type = Py_TYPE(t);
    if ((PyObject *)type == qf_nq_iri_type) {
        out = PyDict_GetItemWithError(iri_cache, t);
        if (out == NULL || !PyUnicode_Check(out) || PyDict_SetItem(cache, t, out) < 0) return NULL;
        return out;  /* (held by both caches) */
    }
    if ((PyObject *)type != bnode_type || !plain_label(t)) return NULL;
    out = PyUnicode_FromFormat("_:%Ux%U", prefix, t);
    if (out == NULL) return NULL;
    int bad = PyDict_SetItem(cache, t, out);
    Py_DECREF(out);  /* (held by the cache) */
    return bad < 0 ? NULL : out;
}

/* Whether the predicate ``p`` starts with one of NOISE_NAMESPACES (p.startswith(NOISE_NAMESPACES)), -1 with an
 * error: compared in place where the two are of one kind (PyUnicode_Tailmatch, two calls a line, cost about
 * a tenth of the line's making). */
static Py_ssize_t noisy(PyObject *p) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(p);
    int kind = PyUnicode_KIND(p);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(noise); i++) {
        PyObject *pre = PyTuple_GET_ITEM(noise, i);
        Py_ssize_t hit;
        if (PyUnicode_CheckExact(pre) && PyUnicode_KIND(pre) == kind) {
            Py_ssize_t k = PyUnicode_GET_LENGTH(pre);
            hit = k <= n && memcmp(PyUnicode_DATA(p), PyUnicode_DATA(pre), (size_t)(k * kind)) == 0;
        } else {
            hit = PyUnicode_Tailmatch(p, pre, 0, PY_SSIZE_T_MAX, -1);
        }
        if (hit) return hit;  /* (1, or -1 with an error) */
    }
    return 0;
}

/* Serializer.line's answer for (s, p, o) from cached terms (a new reference), Py_None (a new reference) where
 * Python must decide, or NULL with an error set. (Not static: collect(), in _nquads_collect.c, calls it.) */
PyObject *qf_nq_make_line(PyObject *cache, PyObject *graph, PyObject *prefix, PyObject *s, PyObject *p, PyObject *o,
                          int keep_all) {
    if ((PyObject *)Py_TYPE(p) != qf_nq_iri_type || (PyObject *)Py_TYPE(s) == literal_type) Py_RETURN_NONE;
    if (!keep_all) {
        Py_ssize_t hit = noisy(p);
        if (hit < 0) return NULL;
        if (hit) Py_RETURN_NONE;
    }
    PyObject *st = term(cache, s, prefix);
    PyObject *pt = st != NULL ? term(cache, p, prefix) : NULL;
    if (pt == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *parts[10] = {st, s_space, pt, s_space};
    int n = 4;
    if ((PyObject *)Py_TYPE(o) == literal_type) {
        PyObject *owned = NULL;
        int k = literal(o, parts + 4, &owned);
        if (k < 0) return NULL;
        if (k == 0) Py_RETURN_NONE;
        n += k;
        parts[n++] = s_space;
        parts[n++] = graph;
        parts[n++] = s_end;
        PyObject *out = join(parts, n);
        Py_XDECREF(owned);
        return out;
    } else {
        PyObject *ot = term(cache, o, prefix);
        if (ot == NULL) {
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        parts[n++] = ot;
    }
    parts[n++] = s_space;
    parts[n++] = graph;
    parts[n++] = s_end;
    return join(parts, n);
}

static PyObject *line(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyDict_Check(args[0]) || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "line(cache, graph, prefix, s, p, o, keep_all)");
        return NULL;
    }
    if (!qf_nq_ready()) return NULL;
    int keep_all = PyObject_IsTrue(args[6]);
    if (keep_all < 0) return NULL;
    return qf_nq_make_line(args[0], args[1], args[2], args[3], args[4], args[5], keep_all);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(IRI, BNode, Literal, LANG_TAGS, IRI_CACHE, NOISE_NAMESPACES, XSD_STRING)"},
    {"line", (PyCFunction)(void (*)(void))line, METH_FASTCALL,
     "line(cache, graph, prefix, s, p, o, keep_all): Serializer.line's answer from cached terms, or None."},
    {"collect", (PyCFunction)(void (*)(void))qf_nq_collect, METH_FASTCALL,
     "collect(triples, cache, graph, prefix, keep_all, slow_line, rdf_type, canonical) -> (lines, types, preds): "
     "run_extractor's loop over one extractor's triples."},
    {"tally", (PyCFunction)(void (*)(void))qf_nq_tally, METH_FASTCALL,
     "tally(types, preds, canonical, classes, props): pagequads.tally_py, the class and class/property counts."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_nquads", "N-Quads lines of cached terms, in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__nquads(void) {
    s_quote = PyUnicode_InternFromString("\"");
    s_at = PyUnicode_InternFromString("\"@");
    s_caret = PyUnicode_InternFromString("\"^^");
    s_space = PyUnicode_InternFromString(" ");
    s_end = PyUnicode_InternFromString(" .\n");
    if (!s_quote || !s_at || !s_caret || !s_space || !s_end) return NULL;
    if (qf_nq_collect_init() < 0) return NULL;
    for (int c = 0; c < 256; c++) lit_bad_low[c] = c < 0x20 || c == '"' || c == '\\' || (c >= 0x7f && c <= 0x9f);
    return PyModule_Create(&module);
}
