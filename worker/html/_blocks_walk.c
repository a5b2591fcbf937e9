/* The one walk of a parsed plain schema.org JSON-LD block to its triples (worker/extractors/jsonld/fused.py's
   _Walk, in C): the second source file of quadfleet.worker.html._blocks, whose module (in _blocks.c) exposes
   schema_org_walk. Kept apart from the block scan because it is its own job: the scan finds a page's blocks,
   this turns one decoded block into triples. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include "_blocks.h"

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

PyObject *qf_schema_org_walk(PyObject *self, PyObject *args) {
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

/* The walk's interned keys and its private exception; 0, or -1 with an error set. */
int qf_schema_org_walk_init(void) {
    S_AT_ID = PyUnicode_InternFromString("@id");
    S_ID = PyUnicode_InternFromString("id");
    S_AT_TYPE = PyUnicode_InternFromString("@type");
    S_TYPE = PyUnicode_InternFromString("type");
    S_AT_CONTEXT = PyUnicode_InternFromString("@context");
    S_AT_GRAPH = PyUnicode_InternFromString("@graph");
    S_TRUE = PyUnicode_InternFromString("true");
    S_FALSE = PyUnicode_InternFromString("false");
    Declined = PyErr_NewException("_blocks.Declined", PyExc_Exception, NULL);
    return S_AT_ID && S_ID && S_AT_TYPE && S_TYPE && S_AT_CONTEXT && S_AT_GRAPH && S_TRUE && S_FALSE && Declined
           ? 0 : -1;
}
