/* The per-page gathering of quadfleet.worker.html._nquads (the module is in _nquads.c): collect(), one
 * extractor's triples to their lines without repeats and each subject's classes and predicates, and tally(), the
 * class and class/property counts over what collect() gathered. Kept apart from _nquads.c because it is its own
 * job: _nquads.c makes the line of one triple (from the page's cached terms), this walks a page's triples with it
 * and finds its repeated lines with a table of its own. The module comment in _nquads.c says why each is in C.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_nquads.h"

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

/* The lines seen so far in one collect() call, by content: an open-addressing table of (hash, line) over the list
 * of lines that holds them. Why not a dict (collect_py's ``seen``): it hashes every line with SipHash (a string's
 * hash is not computed before it is put in a dict), about a fifth of collect()'s time on the crawl mix; this hash
 * reads the line eight bytes a step. Its seed is the process's string hash of a constant (random per process, as
 * Python's own string hashes are), so a page cannot choose lines that collide. */
typedef struct {
    uint64_t hash;
    PyObject *line;  /* (borrowed: held by the list) */
} slot;

typedef struct {
    slot *slots;
    size_t mask;  /* capacity - 1 (a power of two) */
    Py_ssize_t used;
    slot small[64];
} line_set;

static uint64_t hash_seed;

/* The two halves of a * b (a 128-bit product) folded together: wyhash's mixing step. */
static inline uint64_t mum(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* The line's characters (its bytes as stored) hashed sixteen bytes a step, after wyhash. */
static uint64_t line_hash(PyObject *line) {
    const unsigned char *d = PyUnicode_DATA(line);
    size_t n = (size_t)PyUnicode_GET_LENGTH(line) * PyUnicode_KIND(line), total = n;
    uint64_t h = hash_seed, a, b;
    for (; n >= 16; d += 16, n -= 16) {
        memcpy(&a, d, 8);
        memcpy(&b, d + 8, 8);
        h = mum(a ^ 0xa0761d6478bd642fULL, b ^ h);
    }
    a = b = 0;
    if (n > 8) {
        memcpy(&a, d, 8);
        memcpy(&b, d + 8, n - 8);
    } else {
        memcpy(&a, d, n);
    }
    h = mum(a ^ 0xa0761d6478bd642fULL, b ^ h);
    return mum(h ^ 0xe7037ed1a0b428dbULL, total ^ 0x8ebc6af09c88c6e3ULL);
}

static void line_set_init(line_set *t) {
    memset(t->small, 0, sizeof(t->small));
    t->slots = t->small;
    t->mask = 63;
    t->used = 0;
}

static void line_set_free(line_set *t) {
    if (t->slots != t->small) PyMem_Free(t->slots);
}

/* Twice the slots, each line placed again by its hash. -1 with an error. */
static int line_set_grow(line_set *t) {
    size_t cap = (t->mask + 1) * 2;
    slot *fresh = PyMem_Calloc(cap, sizeof(slot));
    if (fresh == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].line == NULL) continue;
        size_t j = (size_t)t->slots[i].hash & (cap - 1);
        while (fresh[j].line != NULL) j = (j + 1) & (cap - 1);
        fresh[j] = t->slots[i];
    }
    line_set_free(t);
    t->slots = fresh;
    t->mask = cap - 1;
    return 0;
}

/* ``line`` appended to ``lines`` and entered in ``t`` unless a line of the same characters is there already: 1 if
 * it was new, 0 if not, -1 with an error. */
static int line_set_add(line_set *t, PyObject *lines, PyObject *line) {
    if (!PyUnicode_Check(line)) {
        PyErr_SetString(PyExc_TypeError, "a serializer's line must be a str");
        return -1;
    }
    uint64_t h = line_hash(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    int kind = PyUnicode_KIND(line);
    size_t i = (size_t)h & t->mask;
    for (; t->slots[i].line != NULL; i = (i + 1) & t->mask) {
        PyObject *other = t->slots[i].line;
        if (t->slots[i].hash == h && PyUnicode_GET_LENGTH(other) == n && PyUnicode_KIND(other) == kind &&
            memcmp(PyUnicode_DATA(other), PyUnicode_DATA(line), (size_t)n * kind) == 0)
            return 0;
    }
    if (PyList_Append(lines, line) < 0) return -1;
    t->slots[i].hash = h;
    t->slots[i].line = line;
    if ((size_t)++t->used * 3 > t->mask * 2 && line_set_grow(t) < 0) return -1;  /* (at most two thirds full) */
    return 1;
}

/* p == rdf_type, as PyObject_RichCompareBool answers, compared in place when both are strings compared as str
 * (IRI, rdf_type's class, is one): every triple asks, and the generic comparison costs a few calls. */
static int is_type(PyObject *p, PyObject *rdf_type) {
    if (p == rdf_type) return 1;
    if (PyUnicode_Check(p) && PyUnicode_Check(rdf_type) &&
        Py_TYPE(p)->tp_richcompare == PyUnicode_Type.tp_richcompare &&
        Py_TYPE(rdf_type)->tp_richcompare == PyUnicode_Type.tp_richcompare) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(p);
        int kind = PyUnicode_KIND(p);
        return n == PyUnicode_GET_LENGTH(rdf_type) && kind == PyUnicode_KIND(rdf_type) &&
               memcmp(PyUnicode_DATA(p), PyUnicode_DATA(rdf_type), (size_t)n * kind) == 0;
    }
    return PyObject_RichCompareBool(p, rdf_type, Py_EQ);
}

/* canonical(key) (a new reference), where ``canon`` is either the callable or a dict of answers (the process's
 * memo: a hit is read from it without a call; a miss is its subscript, which computes through __missing__). */
static PyObject *canonical_of(PyObject *canon, PyObject *key) {
    if (PyDict_Check(canon)) {
        PyObject *hit = PyDict_GetItemWithError(canon, key);  /* borrowed */
        if (hit != NULL) return Py_NewRef(hit);
        if (PyErr_Occurred()) return NULL;
        return PyObject_GetItem(canon, key);
    }
    return PyObject_CallOneArg(canon, key);
}

PyObject *qf_nq_collect(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8 || !PyDict_Check(args[1]) || !PyUnicode_Check(args[2]) || !PyUnicode_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "collect(triples, cache, graph, prefix, keep_all, slow_line, rdf_type, "
                                         "canonical)");
        return NULL;
    }
    if (!qf_nq_ready()) return NULL;
    PyObject *cache = args[1], *graph = args[2], *prefix = args[3], *slow = args[5], *rdf_type = args[6],
             *canon = args[7];
    int keep_all = PyObject_IsTrue(args[4]);
    if (keep_all < 0) return NULL;
    PyObject *it = PyObject_GetIter(args[0]);
    if (it == NULL) return NULL;
    line_set seen;
    line_set_init(&seen);
    PyObject *lines = PyList_New(0), *types = PyDict_New(), *preds = PyDict_New(), *item = NULL, *ln = NULL;
    if (lines == NULL || types == NULL || preds == NULL) goto fail;
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
        ln = qf_nq_make_line(cache, graph, prefix, s, p, o, keep_all);
        if (ln == Py_None) Py_SETREF(ln, PyObject_CallFunctionObjArgs(slow, s, p, o, NULL));
        if (ln == NULL) goto fail;
        if (ln != Py_None) {
            int fresh = line_set_add(&seen, lines, ln);
            if (fresh < 0) goto fail;
            if (fresh) {
                int typed = is_type(p, rdf_type);
                if (typed < 0) goto fail;
                PyObject *set = set_of(typed ? types : preds, s);
                if (set == NULL) goto fail;
                PyObject *member;
                if (!typed) {
                    member = Py_NewRef(p);
                } else if ((PyObject *)Py_TYPE(o) == qf_nq_iri_type) {
                    member = canonical_of(canon, o);
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
    line_set_free(&seen);
    return Py_BuildValue("(NNN)", lines, types, preds);
fail:
    Py_XDECREF(ln);
    Py_XDECREF(item);
    Py_DECREF(it);
    line_set_free(&seen);
    Py_XDECREF(lines);
    Py_XDECREF(types);
    Py_XDECREF(preds);
    return NULL;
}

/* d[key] += 1, from 0 where absent. */
static int count_one(PyObject *d, PyObject *key) {
    PyObject *was = PyDict_GetItemWithError(d, key);  /* borrowed */
    if (was == NULL && PyErr_Occurred()) return -1;
    long n = 0;
    if (was != NULL && (n = PyLong_AsLong(was)) == -1 && PyErr_Occurred()) return -1;
    PyObject *now = PyLong_FromLong(n + 1);
    if (now == NULL) return -1;
    int bad = PyDict_SetItem(d, key, now);
    Py_DECREF(now);
    return bad;
}

/* {canonical(p) for p in predicates}, built in the set's own order (a new reference). */
static PyObject *canonical_set(PyObject *predicates, PyObject *canon) {
    PyObject *out = PySet_New(NULL), *it = out ? PyObject_GetIter(predicates) : NULL, *p;
    if (it == NULL) {
        Py_XDECREF(out);
        return NULL;
    }
    while ((p = PyIter_Next(it)) != NULL) {
        PyObject *c = canonical_of(canon, p);
        Py_DECREF(p);
        if (c == NULL || PySet_Add(out, c) < 0) {
            Py_XDECREF(c);
            goto fail;
        }
        Py_DECREF(c);
    }
    if (PyErr_Occurred()) goto fail;
    Py_DECREF(it);
    return out;
fail:
    Py_DECREF(it);
    Py_DECREF(out);
    return NULL;
}

/* props[(c, p)] += 1 for each p of the set ``ps``, in its order. */
static int count_pairs(PyObject *c, PyObject *ps, PyObject *props) {
    PyObject *it = PyObject_GetIter(ps), *p;
    if (it == NULL) return -1;
    while ((p = PyIter_Next(it)) != NULL) {
        PyObject *key = PyTuple_Pack(2, c, p);
        Py_DECREF(p);
        int bad = key == NULL || count_one(props, key) < 0;
        Py_XDECREF(key);
        if (bad) {
            Py_DECREF(it);
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

/* One typed subject's classes ``cs`` counted in ``classes``, and with its canonical predicates ``ps`` (or NULL) as
 * (class, property) pairs in ``props``. */
static int tally_subject(PyObject *cs, PyObject *ps, PyObject *classes, PyObject *props) {
    PyObject *it = PyObject_GetIter(cs), *c;
    if (it == NULL) return -1;
    while ((c = PyIter_Next(it)) != NULL) {
        int bad = 0;
        if (c != Py_None) {
            bad = count_one(classes, c) < 0 || (ps != NULL && count_pairs(c, ps, props) < 0);
        }
        Py_DECREF(c);
        if (bad) {
            Py_DECREF(it);
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

PyObject *qf_nq_tally(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyDict_Check(args[0]) || !PyDict_Check(args[1]) || !PyDict_Check(args[3]) ||
        !PyDict_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "tally(types, preds, canonical, classes, props)");
        return NULL;
    }
    PyObject *types = args[0], *preds = args[1], *canon = args[2], *s, *cs;
    Py_ssize_t pos = 0;
    while (PyDict_Next(types, &pos, &s, &cs)) {
        Py_INCREF(s);
        Py_INCREF(cs);
        PyObject *ps = PyDict_GetItemWithError(preds, s);  /* borrowed */
        int bad = ps == NULL && PyErr_Occurred();
        Py_ssize_t n = bad || ps == NULL ? 0 : PyObject_Length(ps);
        bad = bad || n < 0;
        ps = bad || n == 0 ? NULL : canonical_set(ps, canon);
        bad = bad || (n > 0 && ps == NULL) || tally_subject(cs, ps, args[3], args[4]) < 0;
        Py_XDECREF(ps);
        Py_DECREF(s);
        Py_DECREF(cs);
        if (bad) return NULL;
    }
    Py_RETURN_NONE;
}

int qf_nq_collect_init(void) {
    PyObject *seed = PyUnicode_FromString("quadfleet._nquads line hash");
    if (seed == NULL) return -1;
    hash_seed = (uint64_t)PyObject_Hash(seed);
    Py_DECREF(seed);
    return 0;
}
