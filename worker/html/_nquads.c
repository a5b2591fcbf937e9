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

/* The serialized literal, or NULL with no error set where Python must decide (NULL with an error: an error). */
static PyObject *literal(PyObject *o) {
    if (PyTuple_GET_SIZE(o) != 3) return NULL;
    PyObject *value = PyTuple_GET_ITEM(o, 0), *lang = PyTuple_GET_ITEM(o, 1), *datatype = PyTuple_GET_ITEM(o, 2);
    if (!PyUnicode_CheckExact(value) || !plain_text(value)) return NULL;
    if (lang != Py_None) {
        if (!PyUnicode_Check(lang)) return NULL;
        if (PyUnicode_GET_LENGTH(lang) > 0) {
            PyObject *tag = PyDict_GetItemWithError(lang_tags, lang);  /* borrowed */
            if (tag == NULL) return NULL;  /* not seen yet (or an error, passed on) */
            if (tag != Py_None) {
                if (!PyUnicode_Check(tag)) return NULL;
                if (PyUnicode_GET_LENGTH(tag) > 0) return PyUnicode_FromFormat("\"%U\"@%U", value, tag);
            }
        }
    }
    if (datatype != Py_None) {
        if (!PyUnicode_Check(datatype)) return NULL;
        if (PyUnicode_GET_LENGTH(datatype) > 0) {
            int same = PyUnicode_Compare(datatype, xsd_string);
            if (same == -1 && PyErr_Occurred()) return NULL;
            if (same != 0) {
                PyObject *dt = PyDict_GetItemWithError(iri_cache, datatype);  /* borrowed */
                if (dt == NULL || !PyUnicode_Check(dt)) return NULL;  /* not seen, or not an IRI: Python */
                return PyUnicode_FromFormat("\"%U\"^^%U", value, dt);
            }
        }
    }
    return PyUnicode_FromFormat("\"%U\"", value);
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

static PyObject *line(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7 || !PyDict_Check(args[0]) || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "line(cache, graph, prefix, s, p, o, keep_all)");
        return NULL;
    }
    if (iri_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "line() before setup()");
        return NULL;
    }
    PyObject *cache = args[0], *graph = args[1], *prefix = args[2], *s = args[3], *p = args[4], *o = args[5];
    if ((PyObject *)Py_TYPE(p) != iri_type || (PyObject *)Py_TYPE(s) == literal_type) Py_RETURN_NONE;
    int keep_all = PyObject_IsTrue(args[6]);
    if (keep_all < 0) return NULL;
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
    PyObject *ot;
    if ((PyObject *)Py_TYPE(o) == literal_type) {
        ot = literal(o);
    } else {
        ot = term(cache, o, prefix);
        Py_XINCREF(ot);
    }
    if (ot == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    PyObject *out = PyUnicode_FromFormat("%U %U %U %U .\n", st, pt, ot, graph);
    Py_DECREF(ot);
    return out;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(IRI, BNode, Literal, LANG_TAGS, IRI_CACHE, NOISE_NAMESPACES, XSD_STRING)"},
    {"line", (PyCFunction)(void (*)(void))line, METH_FASTCALL,
     "line(cache, graph, prefix, s, p, o, keep_all): Serializer.line's answer from cached terms, or None."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_nquads", "N-Quads lines of cached terms, in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__nquads(void) { return PyModule_Create(&module); }
