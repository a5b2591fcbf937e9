/* The per-line pass of check_lines (worker/quality/check.py) over the lines that need nothing of Python, in C.

   check_lines splits every line at its first two spaces, checks that it ends with its graph ("> ." or "> .\n"),
   and looks its predicate up in a memo; most lines end there (a property with nothing to check, another
   vocabulary, an rdf:type whose class is spelt right, a property whose domain holds the subject's first class).
   A Scan walks a page's lines doing exactly that and yields (index, line) only for the lines it cannot finish,
   which the Python loop then checks as it checks every line without this module (its body is the definition):
   a predicate or a class not in the scan's memos yet, a misspelling, a literal to check, a domain that the
   subject's first class does not settle. The scan is lazy (it goes on only when the next line is asked for),
   so each line sees the page's classes as the Python loop left them: the findings and the order of the classes
   are the same.

   What the scan knows comes from check.py's memos made for it (filled by the Python path when it first meets a
   token), never from the vocabulary:
   - predicates: token -> the plain marker (counted, nothing to check), None (not schema.org: passed over), the
     rdf:type marker, or a tuple (flags, in_domain dict or None); anything else sends the line to Python;
   - classes: rdf:type object token -> the class key (a class spelt right), None (not schema.org: passed over);
     anything else sends the line to Python.
   skipped counts the lines the scan passed over (not quads, not schema.org), as the Python loop counts its own. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define F_LITERALS 1   /* a literal of the property is checked */
#define F_DOMAIN 2     /* the property has a domain to check */
#define F_OBJECTS 4    /* its range holds classes only: a literal is Python's (whether a repair changes its line turns
                          on what the literal says) */
#define F_QUANTITY 8   /* a literal is text for a Quantity: an advisory finding (the domain is still checked), unless
                          the Quantity has a lexical form (a Duration's: its match is given) and the literal is not
                          one; else a literal's lexical form is checked, and a bad one is the quad's one error */

/* check.py's markers, its Finding class and two kinds of finding, given once by setup(). */
static PyObject *PLAIN, *TYPE, *FINDING, *BAD_LEXICAL_FORM, *TEXT_FOR_QUANTITY;

/* The token strings last looked up (predicates, classes), by a cheap hash of their characters: a line's token
   found here is looked up in the memo as this string, whose hash Python has kept, rather than as a new string
   hashed again (most of a line's cost). The memos stay the only source of what a token means. */
#define N_TOKENS 4096
static PyObject *TOKENS[N_TOKENS];

typedef struct {
    PyObject_HEAD
    PyObject *lines, *preds, *types, *classes;
    PyObject *findings;   /* the PageCheck's list of findings */
    PyObject *subject;   /* the last line's subject (lines of one entity follow each other) */
    Py_ssize_t next, skipped;
    int full;
} Scan;

/* Whether line[lo:lo+n] holds the characters of the str `str`. */
static int same_chars(int kind, const void *data, Py_ssize_t lo, Py_ssize_t n, PyObject *str) {
    if (PyUnicode_GET_LENGTH(str) != n) return 0;
    int k = PyUnicode_KIND(str);
    const void *d = PyUnicode_DATA(str);
    if (k == kind) return memcmp((const char *)data + lo * kind, d, (size_t)(n * kind)) == 0;
    for (Py_ssize_t j = 0; j < n; j++)
        if (PyUnicode_READ(kind, data, lo + j) != PyUnicode_READ(k, d, j)) return 0;
    return 1;
}

/* A hash of a token's length and its first and last characters (tokens differ near their end: a collision only
   costs a memo lookup of a new string). */
static uint64_t token_hash(int kind, const void *data, Py_ssize_t lo, Py_ssize_t n) {
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
    if (kind == PyUnicode_1BYTE_KIND && n >= 16) {
        const unsigned char *c = (const unsigned char *)data + lo;
        uint64_t w[3];
        memcpy(&w[0], c, 8);
        memcpy(&w[1], c + n - 16, 8);
        memcpy(&w[2], c + n - 8, 8);
        h = (h ^ w[0]) * 0xFF51AFD7ED558CCDULL;
        h = (h ^ (h >> 29) ^ w[1]) * 0xFF51AFD7ED558CCDULL;
        h = (h ^ (h >> 29) ^ w[2]) * 0xFF51AFD7ED558CCDULL;
    } else {
        for (Py_ssize_t j = 0; j < n; j++) h = (h ^ PyUnicode_READ(kind, data, lo + j)) * 0x100000001B3ULL;
    }
    return h ^ (h >> 32);
}

/* line[lo:hi] as a str (a new reference), the one in TOKENS where it is there. */
static PyObject *token(PyObject *line, int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi) {
    PyObject **slot = &TOKENS[token_hash(kind, data, lo, hi - lo) & (N_TOKENS - 1)];
    if (*slot != NULL && same_chars(kind, data, lo, hi - lo, *slot)) {
        Py_INCREF(*slot);
        return *slot;
    }
    PyObject *tok = PyUnicode_Substring(line, lo, hi);
    if (tok == NULL) return NULL;
    Py_INCREF(tok);
    Py_XSETREF(*slot, tok);
    return tok;
}

/* The subject line[:a] (a new reference): the last line's where it is the same. */
static PyObject *subject(Scan *self, PyObject *line, int kind, const void *data, Py_ssize_t a) {
    if (self->subject == NULL || !same_chars(kind, data, 0, a, self->subject)) {
        PyObject *s = PyUnicode_Substring(line, 0, a);
        if (s == NULL) return NULL;
        Py_XSETREF(self->subject, s);
    }
    Py_INCREF(self->subject);
    return self->subject;
}

/* The first `c` in s[lo:hi], or -1. */
static Py_ssize_t find_char(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi, Py_UCS4 c) {
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *at = memchr((const char *)data + lo, (int)c, (size_t)(hi - lo));
        return at ? at - (const char *)data : -1;
    }
    for (Py_ssize_t k = lo; k < hi; k++)
        if (PyUnicode_READ(kind, data, k) == c) return k;
    return -1;
}

static int ends_with(int kind, const void *data, Py_ssize_t n, const char *tail, Py_ssize_t t) {
    if (n < t) return 0;
    if (kind == PyUnicode_1BYTE_KIND) return memcmp((const char *)data + n - t, tail, (size_t)t) == 0;
    for (Py_ssize_t k = 0; k < t; k++)
        if (PyUnicode_READ(kind, data, n - t + k) != (Py_UCS4)(unsigned char)tail[k]) return 0;
    return 1;
}

/* An rdf:type line: 1 done (its class added to the subject's), 0 passed over (counted), -1 Python's, -2 error. */
static int type_line(Scan *self, PyObject *line, int kind, const void *data, Py_ssize_t a, Py_ssize_t b,
                     Py_ssize_t n) {
    if (PyUnicode_READ(kind, data, b + 1) != '<') return 0;
    Py_ssize_t gt = find_char(kind, data, b + 1, n, '>');
    if (gt < 0) return -1;
    PyObject *obj = token(line, kind, data, b + 1, gt + 1);
    if (obj == NULL) return -2;
    PyObject *key = PyDict_GetItemWithError(self->types, obj);   /* borrowed */
    Py_DECREF(obj);
    if (key == NULL) return PyErr_Occurred() ? -2 : -1;
    if (key == Py_None) return 0;
    if (!PyUnicode_CheckExact(key)) return -1;
    PyObject *s = subject(self, line, kind, data, a);
    if (s == NULL) return -2;
    PyObject *keys = PyDict_GetItemWithError(self->classes, s);
    int rc = 1;
    if (keys == NULL) {
        if (PyErr_Occurred()) rc = -2;
        else {
            PyObject *list = PyList_New(1);
            if (list == NULL) rc = -2;
            else {
                Py_INCREF(key);
                PyList_SET_ITEM(list, 0, key);
                if (PyDict_SetItem(self->classes, s, list) < 0) rc = -2;
                Py_DECREF(list);
            }
        }
    } else if (!PyList_CheckExact(keys)) {
        rc = -1;
    } else {
        int has = PySequence_Contains(keys, key);
        if (has < 0 || (!has && PyList_Append(keys, key) < 0)) rc = -2;
    }
    Py_DECREF(s);
    return rc;
}

/* Whether the subject's first class (as the page's lines so far give them) is in the domain: 1 yes, -1 not known
   here (no class yet, not in the domain, not asked yet: Python's), -2 error. */
static int in_domain(Scan *self, PyObject *s, PyObject *memo) {
    if (!PyDict_CheckExact(memo)) return -1;
    PyObject *keys = PyDict_GetItemWithError(self->classes, s);
    if (keys == NULL) return PyErr_Occurred() ? -2 : -1;
    if (!PyList_CheckExact(keys) || PyList_GET_SIZE(keys) == 0) return -1;
    PyObject *ok = PyDict_GetItemWithError(memo, PyList_GET_ITEM(keys, 0));
    if (ok == NULL) return PyErr_Occurred() ? -2 : -1;
    int yes = PyObject_IsTrue(ok);
    return yes < 0 ? -2 : (yes ? 1 : -1);
}

/* A finding of `kind` on the line i: 1, or -2 error. */
static int finding(Scan *self, PyObject *kind, PyObject *s, Py_ssize_t i, PyObject *key) {
    PyObject *at = PyLong_FromSsize_t(i);
    if (at == NULL) return -2;
    PyObject *args[5] = {kind, s, at, key, key};
    PyObject *found = PyObject_Vectorcall(FINDING, args, 5, NULL);
    int rc = found == NULL || PyList_Append(self->findings, found) < 0 ? -2 : 1;
    Py_XDECREF(found);
    Py_DECREF(at);
    return rc;
}

/* The lexical form of the literal at line[lo:n] stripped (check.py's lexical_form(rest).strip()), a new reference;
   NULL without an error where Python is to make it (an escape to undo, a line it raises on). */
static PyObject *stripped_form(PyObject *line, int kind, const void *data, Py_ssize_t lo, Py_ssize_t n) {
    Py_ssize_t r = -1, q = -1;
    for (Py_ssize_t k = n - 2; k >= lo; k--)
        if (PyUnicode_READ(kind, data, k) == ' ' && PyUnicode_READ(kind, data, k + 1) == '<') { r = k; break; }
    if (r < 0) return NULL;
    for (Py_ssize_t k = r - 1; k >= lo; k--)
        if (PyUnicode_READ(kind, data, k) == '"') { q = k; break; }
    if (q < 0) return NULL;
    Py_ssize_t start = lo + 1, end = q;
    if (find_char(kind, data, start, end, '\\') >= 0) return NULL;
    while (start < end && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, start))) start++;
    while (end > start && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1))) end--;
    return PyUnicode_Substring(line, start, end);
}

/* A line of a property spelt right with something to check (entry: (flags, its in_domain memo, its key, the
   match of its literals' pattern or None)): 1 done, -1 Python's, -2 error. A line is Python's whole (nothing of
   it is done here) if any of it is: a finding is added only once the domain is settled (asking has no effect). */
static int property_line(Scan *self, PyObject *line, Py_ssize_t i, PyObject *entry, int kind, const void *data,
                         Py_ssize_t a, Py_ssize_t b, Py_ssize_t n) {
    if (PyTuple_GET_SIZE(entry) != 4 || !PyLong_CheckExact(PyTuple_GET_ITEM(entry, 0))) return -1;
    long flags = PyLong_AsLong(PyTuple_GET_ITEM(entry, 0));
    PyObject *key = PyTuple_GET_ITEM(entry, 2), *match = PyTuple_GET_ITEM(entry, 3);
    int literal = (flags & F_LITERALS) && PyUnicode_READ(kind, data, b + 1) == '"';
    if (literal && (flags & F_OBJECTS)) return -1;
    int quantity = literal && (flags & F_QUANTITY);
    int lexical = literal && self->full && (!quantity || match != Py_None);
    int domain = (flags & F_DOMAIN) && self->full;
    if (!quantity && !lexical && !domain) return 1;
    if (!PyUnicode_CheckExact(key) || (lexical && match == Py_None)) return -1;
    PyObject *form = NULL;
    if (lexical && (form = stripped_form(line, kind, data, b + 1, n)) == NULL) return PyErr_Occurred() ? -2 : -1;
    PyObject *s = subject(self, line, kind, data, a);
    int rc = s == NULL ? -2 : 1, bad = 0;
    if (rc == 1 && lexical) {
        PyObject *got = PyObject_CallOneArg(match, form);
        if (got == NULL) rc = -2;
        else bad = got == Py_None;
        Py_XDECREF(got);
    }
    if (rc == 1 && bad) rc = finding(self, BAD_LEXICAL_FORM, s, i, key);   /* the quad's one error: no domain */
    else if (rc == 1) {
        if (domain) rc = in_domain(self, s, PyTuple_GET_ITEM(entry, 1));
        if (rc == 1 && quantity) rc = finding(self, TEXT_FOR_QUANTITY, s, i, key);
    }
    Py_XDECREF(form);
    Py_XDECREF(s);
    return rc;
}

/* One line: 1 done, 0 passed over (counted), -1 Python's, -2 error. */
static int scan_line(Scan *self, PyObject *line, Py_ssize_t i) {
    if (!PyUnicode_CheckExact(line) || PyUnicode_READY(line) < 0) return -1;
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    Py_ssize_t a = find_char(kind, data, 0, n, ' ');
    Py_ssize_t b = a < 0 ? -1 : find_char(kind, data, a + 1, n, ' ');
    if (b < 0) return 0;   /* not a quad */
    if (!ends_with(kind, data, n, "> .\n", 4) && !ends_with(kind, data, n, "> .", 3)) return 0;
    PyObject *p = token(line, kind, data, a + 1, b);
    if (p == NULL) return -2;
    PyObject *entry = PyDict_GetItemWithError(self->preds, p);   /* borrowed */
    Py_DECREF(p);
    if (entry == NULL) return PyErr_Occurred() ? -2 : -1;
    if (entry == PLAIN) return 1;
    if (entry == Py_None) return 0;
    if (entry == TYPE) return type_line(self, line, kind, data, a, b, n);
    if (PyTuple_CheckExact(entry)) return property_line(self, line, i, entry, kind, data, a, b, n);
    return -1;
}

static PyObject *Scan_next(Scan *self) {
    Py_ssize_t count = PyList_GET_SIZE(self->lines);
    while (self->next < count) {
        Py_ssize_t i = self->next++;
        PyObject *line = PyList_GET_ITEM(self->lines, i);
        Py_INCREF(line);
        int rc = scan_line(self, line, i);
        if (rc == -1) {
            PyObject *pair = PyTuple_New(2), *at = PyLong_FromSsize_t(i);
            if (pair == NULL || at == NULL) {
                Py_XDECREF(pair); Py_XDECREF(at); Py_DECREF(line);
                return NULL;
            }
            PyTuple_SET_ITEM(pair, 0, at);
            PyTuple_SET_ITEM(pair, 1, line);
            return pair;
        }
        Py_DECREF(line);
        if (rc == -2) return NULL;
        if (rc == 0) self->skipped++;
        count = PyList_GET_SIZE(self->lines);
    }
    return NULL;
}

/* A list attribute of the PageCheck (a new reference), or NULL with an error set. */
static PyObject *list_of(PyObject *out, const char *name) {
    PyObject *got = PyObject_GetAttrString(out, name);
    if (got != NULL && !PyList_CheckExact(got)) {
        PyErr_Format(PyExc_TypeError, "Scan(): out.%s is not a list", name);
        Py_CLEAR(got);
    }
    return got;
}

static PyObject *Scan_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (kwds != NULL && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Scan() takes no keyword arguments");
        return NULL;
    }
    if (PLAIN == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "setup() was not called");
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 5) {
        PyErr_SetString(PyExc_TypeError, "Scan(lines, full, predicates, classes, out) takes 5 arguments");
        return NULL;
    }
    PyObject *lines = PyTuple_GET_ITEM(args, 0), *preds = PyTuple_GET_ITEM(args, 2);
    PyObject *types = PyTuple_GET_ITEM(args, 3), *out = PyTuple_GET_ITEM(args, 4);
    int full = PyObject_IsTrue(PyTuple_GET_ITEM(args, 1));
    if (full < 0) return NULL;
    if (!PyList_CheckExact(lines) || !PyDict_CheckExact(preds) || !PyDict_CheckExact(types)) {
        PyErr_SetString(PyExc_TypeError, "Scan(): lines must be a list, the memos dicts");
        return NULL;
    }
    PyObject *classes = PyObject_GetAttrString(out, "classes");
    if (classes == NULL) return NULL;
    if (!PyDict_CheckExact(classes)) {
        Py_DECREF(classes);
        PyErr_SetString(PyExc_TypeError, "Scan(): out.classes is not a dict");
        return NULL;
    }
    PyObject *findings = list_of(out, "findings");
    Scan *self = findings ? (Scan *)type->tp_alloc(type, 0) : NULL;
    if (self == NULL) {
        Py_DECREF(classes); Py_XDECREF(findings);
        return NULL;
    }
    Py_INCREF(lines); Py_INCREF(preds); Py_INCREF(types);
    self->lines = lines; self->preds = preds; self->types = types; self->classes = classes;
    self->findings = findings;
    self->full = full;
    self->subject = NULL;
    self->next = self->skipped = 0;
    return (PyObject *)self;
}

static void Scan_dealloc(Scan *self) {
    Py_XDECREF(self->lines); Py_XDECREF(self->preds); Py_XDECREF(self->types); Py_XDECREF(self->classes);
    Py_XDECREF(self->findings);
    Py_XDECREF(self->subject);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Scan_members[] = {
    {"skipped", T_PYSSIZET, offsetof(Scan, skipped), READONLY, "lines the scan passed over (no schema.org quad)"},
    {NULL}
};

static PyTypeObject ScanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "quadfleet.worker.quality._check.Scan",
    .tp_basicsize = sizeof(Scan),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scan(lines, full, predicates, classes, out): (index, line) of each line left to Python.",
    .tp_new = Scan_new,
    .tp_dealloc = (destructor)Scan_dealloc,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)Scan_next,
    .tp_members = Scan_members,
};

static PyObject *setup(PyObject *mod, PyObject *args) {
    PyObject *plain, *type, *found, *lexical, *quantity;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OOOUU:setup", &plain, &type, &found, &lexical, &quantity)) return NULL;
    Py_INCREF(plain); Py_INCREF(type); Py_INCREF(found); Py_INCREF(lexical); Py_INCREF(quantity);
    Py_XSETREF(PLAIN, plain); Py_XSETREF(TYPE, type); Py_XSETREF(FINDING, found);
    Py_XSETREF(BAD_LEXICAL_FORM, lexical); Py_XSETREF(TEXT_FOR_QUANTITY, quantity);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS,
     "setup(plain, type, Finding, bad_lexical_form, text_for_quantity): check.py's markers, class and kinds."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_check", NULL, -1, methods};

PyMODINIT_FUNC PyInit__check(void) {
    if (PyType_Ready(&ScanType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&ScanType);
    if (PyModule_AddObject(m, "Scan", (PyObject *)&ScanType) < 0) {
        Py_DECREF(&ScanType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
