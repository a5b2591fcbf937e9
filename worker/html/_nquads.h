/* What the two source files of quadfleet.worker.html._nquads share: _nquads.c (the module, setup(), the terms and
 * one triple's line) and _nquads_collect.c (collect() and tally(), the per-page gathering over those lines). */
#ifndef QF_NQUADS_H
#define QF_NQUADS_H
#include <Python.h>

/* Everything below is hidden in the module's shared object (the module exports PyInit__nquads alone): so that a
 * call from one file to the other is a direct call and the shared global a direct load, as within one file, rather
 * than through the PLT and GOT (-fPIC's default for a name another object could interpose). */
#pragma GCC visibility push(hidden)

/* The IRI term type setup() was given (NULL before setup()): set in _nquads.c, read by collect() to tell an IRI
 * object of an rdf:type triple (its class) from another object. */
extern PyObject *qf_nq_iri_type;

/* Whether setup() has run, else 0 with an error set: line() and collect() both refuse to work before it. Inline
 * (a test of one pointer), so that neither file calls the other for it. */
static inline int qf_nq_ready(void) {
    if (qf_nq_iri_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_nquads used before setup()");
        return 0;
    }
    return 1;
}

/* Serializer.line's answer for (s, p, o) from cached terms (a new reference), Py_None (a new reference) where
 * Python must decide, or NULL with an error set. In _nquads.c (line() is it); collect() makes each triple's line
 * with it. */
PyObject *qf_nq_make_line(PyObject *cache, PyObject *graph, PyObject *prefix, PyObject *s, PyObject *p, PyObject *o,
                          int keep_all);

/* The module's collect() and tally(), in _nquads_collect.c, for the method table in _nquads.c. */
PyObject *qf_nq_collect(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *qf_nq_tally(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* Made once, before the module (the seed of collect()'s table of lines, kept in _nquads_collect.c): 0, or -1 with
 * an error set. */
int qf_nq_collect_init(void);

#pragma GCC visibility pop

#endif
