/* quadfleet.worker.html._nquads: one N-Quads line built in C from terms the page's serializer has already
 * made, or None where the Python serializer (quadfleet.worker.rdf.nquads.Serializer.line, the definition) must
 * decide.
 *
 * Why: a page's triples repeat their subjects and predicates, so Serializer.line mostly looks terms up in its
 * per-page cache and formats a string; in Python that is about a microsecond a triple, 4-5% of an extraction
 * of real pages. Here the same lookups and the same string, for the common case only: every term already in
 * the caches (the page's, the process's language tags and IRIs; a blank node with a plain label is made here)
 * and a literal with nothing to escape. Anything else (an IRI new to the process, a character to escape, a term
 * to drop, a noise predicate) returns None
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
 *   extractor's own on the crawl mix's 17,600 triples: 29 ms in Python, 25 ms here).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *iri_type, *bnode_type, *literal_type, *lang_tags, *iri_cache, *noise, *xsd_string;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *iri, *bnode, *literal, *tags, *iris, *noise_prefixes, *xsd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!U", &PyType_Type, &iri, &PyType_Type, &bnode, &PyType_Type, &literal,
                          &PyDict_Type, &tags, &PyDict_Type, &iris, &PyTuple_Type, &noise_prefixes, &xsd))
        return NULL;
    PyObject *olds[] = {iri_type, bnode_type, literal_type, lang_tags, iri_cache, noise, xsd_string};
    Py_INCREF(iri);
    Py_INCREF(bnode);
    Py_INCREF(literal);
    Py_INCREF(tags);
    Py_INCREF(iris);
    Py_INCREF(noise_prefixes);
    Py_INCREF(xsd);
    iri_type = iri;
    bnode_type = bnode;
    literal_type = literal;
    lang_tags = tags;
    iri_cache = iris;
    noise = noise_prefixes;
    xsd_string = xsd;
    for (int i = 0; i < 7; i++) Py_XDECREF(olds[i]);
    Py_RETURN_NONE;
}

/* Whether a literal's value can be written between quotes as it is (what nquads._LIT_BAD does not match). */
static int plain_text(PyObject *value) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    int kind = PyUnicode_KIND(value);
    const void *data = PyUnicode_DATA(value);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x20 || c == '"' || c == '\\' || (c >= 0x7f && c <= 0x9f)) return 0;
        if (c >= 0x2028 && (c == 0x2028 || c == 0x2029 || (c >= 0xd800 && c <= 0xdfff))) return 0;
    }
    return 1;
}

static PyObject *s_quote, *s_at, *s_caret, *s_space, *s_end;  /* '"', '"@', '"^^', ' ', ' .\n' */

/* The parts joined in one string (PyUnicode_FromFormat parses its format and grows a writer: about twice
 * the time, for lines that are nearly all ASCII). */
static PyObject *join(PyObject *const *parts, int n) {
    Py_ssize_t len = 0;
    Py_UCS4 maxchar = 0;
    for (int i = 0; i < n; i++) {
        len += PyUnicode_GET_LENGTH(parts[i]);
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(parts[i]);
        if (m > maxchar) maxchar = m;
    }
    PyObject *out = PyUnicode_New(len, maxchar);
    if (out == NULL) return NULL;
    Py_ssize_t at = 0;
    for (int i = 0; i < n; i++) {
        Py_ssize_t k = PyUnicode_GET_LENGTH(parts[i]);
        if (PyUnicode_KIND(parts[i]) == PyUnicode_KIND(out)) {
            memcpy((char *)PyUnicode_DATA(out) + at * PyUnicode_KIND(out), PyUnicode_DATA(parts[i]),
                   (size_t)(k * PyUnicode_KIND(out)));
        } else if (PyUnicode_CopyCharacters(out, at, parts[i], 0, k) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        at += k;
    }
    return out;
}

/* The serialized literal's parts (borrowed: the literal's own strings and the constants above) in ``parts``,
 * and how many (2 or 4: '"', value, then '"' alone or '"@' tag / '"^^' datatype); 0 with no error set where
 * Python must decide, -1 with an error. */
static int literal(PyObject *o, PyObject **parts) {
    if (PyTuple_GET_SIZE(o) != 3) return 0;
    PyObject *value = PyTuple_GET_ITEM(o, 0), *lang = PyTuple_GET_ITEM(o, 1), *datatype = PyTuple_GET_ITEM(o, 2);
    if (!PyUnicode_CheckExact(value) || !plain_text(value)) return 0;
    parts[0] = s_quote;
    parts[1] = value;
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
                    return 4;
                }
            }
        }
    }
    if (datatype != Py_None) {
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
                return 4;
            }
        }
    }
    parts[2] = s_quote;
    return 3;
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
    if ((PyObject *)type == iri_type) {
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

/* Serializer.line's answer for (s, p, o) from cached terms (a new reference), Py_None (a new reference) where
 * Python must decide, or NULL with an error set. */
static PyObject *make_line(PyObject *cache, PyObject *graph, PyObject *prefix, PyObject *s, PyObject *p, PyObject *o,
                           int keep_all) {
    if ((PyObject *)Py_TYPE(p) != iri_type || (PyObject *)Py_TYPE(s) == literal_type) Py_RETURN_NONE;
    if (!keep_all) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(noise); i++) {
            Py_ssize_t hit = PyUnicode_Tailmatch(p, PyTuple_GET_ITEM(noise, i), 0, PY_SSIZE_T_MAX, -1);
            if (hit < 0) return NULL;
            if (hit) Py_RETURN_NONE;
        }
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
        int k = literal(o, parts + 4);
        if (k < 0) return NULL;
        if (k == 0) Py_RETURN_NONE;
        n += k;
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

static int ready(void) {
    if (iri_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_nquads used before setup()");
        return 0;
    }
    return 1;
}

static PyObject *line(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyDict_Check(args[0]) || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "line(cache, graph, prefix, s, p, o, keep_all)");
        return NULL;
    }
    if (!ready()) return NULL;
    int keep_all = PyObject_IsTrue(args[6]);
    if (keep_all < 0) return NULL;
    return make_line(args[0], args[1], args[2], args[3], args[4], args[5], keep_all);
}

/* ``set`` := table[key], made empty first where there is none (borrowed; NULL with an error set). */
static PyObject *set_of(PyObject *table, PyObject *key) {
    PyObject *set = PyDict_GetItemWithError(table, key);
    if (set != NULL || PyErr_Occurred()) return set;
    set = PySet_New(NULL);
    if (set == NULL) return NULL;
    int bad = PyDict_SetItem(table, key, set);
    Py_DECREF(set);  /* (held by the table) */
    return bad < 0 ? NULL : set;
}

static PyObject *collect(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 || !PyDict_Check(args[1]) || !PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "collect(triples, cache, graph, prefix, keep_all, slow_line, rdf_type, "
                                         "canonical)");
        return NULL;
    }
    if (!ready()) return NULL;
    PyObject *cache = args[1], *graph = args[2], *prefix = args[3], *slow = args[5], *rdf_type = args[6],
             *canon = args[7];
    int keep_all = PyObject_IsTrue(args[4]);
    if (keep_all < 0) return NULL;
    PyObject *it = PyObject_GetIter(args[0]);
    if (it == NULL) return NULL;
    PyObject *seen = PyDict_New(), *types = PyDict_New(), *preds = PyDict_New(), *item = NULL, *ln = NULL;
    if (seen == NULL || types == NULL || preds == NULL) goto fail;
    while ((item = PyIter_Next(it)) != NULL) {
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3) {  /* unpacked as `for s, p, o in` does */
            PyObject *tup = PySequence_Tuple(item);
            Py_SETREF(item, tup);
            if (item == NULL) goto fail;
            if (PyTuple_GET_SIZE(item) != 3) {
                if (PyTuple_GET_SIZE(item) > 3)
                    PyErr_SetString(PyExc_ValueError, "too many values to unpack (expected 3)");
                else
                    PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected 3, got %zd)",
                                 PyTuple_GET_SIZE(item));
                goto fail;
            }
        }
        PyObject *s = PyTuple_GET_ITEM(item, 0), *p = PyTuple_GET_ITEM(item, 1), *o = PyTuple_GET_ITEM(item, 2);
        ln = make_line(cache, graph, prefix, s, p, o, keep_all);
        if (ln == Py_None) Py_SETREF(ln, PyObject_CallFunctionObjArgs(slow, s, p, o, NULL));
        if (ln == NULL) goto fail;
        if (ln != Py_None) {
            int dup = PyDict_Contains(seen, ln);
            if (dup < 0) goto fail;
            if (!dup) {
                if (PyDict_SetItem(seen, ln, Py_None) < 0) goto fail;
                int typed = PyObject_RichCompareBool(p, rdf_type, Py_EQ);
                if (typed < 0) goto fail;
                PyObject *set = set_of(typed ? types : preds, s);
                if (set == NULL) goto fail;
                PyObject *member;
                if (!typed) {
                    member = Py_NewRef(p);
                } else if ((PyObject *)Py_TYPE(o) == iri_type) {
                    member = PyObject_CallOneArg(canon, o);
                    if (member == NULL) goto fail;
                } else {
                    member = Py_NewRef(Py_None);
                }
                int bad = PySet_Add(set, member);
                Py_DECREF(member);
                if (bad < 0) goto fail;
            }
        }
        Py_CLEAR(ln);
        Py_CLEAR(item);
    }
    if (PyErr_Occurred()) goto fail;  /* the extractor raised */
    Py_DECREF(it);
    PyObject *lines = PyDict_Keys(seen);
    Py_DECREF(seen);
    if (lines == NULL) {
        Py_DECREF(types);
        Py_DECREF(preds);
        return NULL;
    }
    return Py_BuildValue("(NNN)", lines, types, preds);
fail:
    Py_XDECREF(ln);
    Py_XDECREF(item);
    Py_DECREF(it);
    Py_XDECREF(seen);
    Py_XDECREF(types);
    Py_XDECREF(preds);
    return NULL;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(IRI, BNode, Literal, LANG_TAGS, IRI_CACHE, NOISE_NAMESPACES, XSD_STRING)"},
    {"line", (PyCFunction)(void (*)(void))line, METH_FASTCALL,
     "line(cache, graph, prefix, s, p, o, keep_all): Serializer.line's answer from cached terms, or None."},
    {"collect", (PyCFunction)(void (*)(void))collect, METH_FASTCALL,
     "collect(triples, cache, graph, prefix, keep_all, slow_line, rdf_type, canonical) -> (lines, types, preds): "
     "run_extractor's loop over one extractor's triples."},
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
    return PyModule_Create(&module);
}
