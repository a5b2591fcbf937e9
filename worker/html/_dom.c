/* quadfleet.worker.html._dom: the elements of an lxml tree that carry given attributes, found by walking libxml2's
 * nodes in C.
 *
 * Why: microdata, RDFa and the microformats each start by finding the few elements that carry their
 * attributes. lxml's XPath "//@itemprop/.." costs about 0.15 us a node (a node set of every node is built
 * first), a walk in Python (root.iter() and get) more, since every element gets a Python proxy; on a page of
 * 2,000 nodes that is 300 us a query, and a microdata page asks two. Here the walk reads libxml2's node and
 * attribute structs directly and makes a proxy (lxml's public C API, elementFactory) only for the elements
 * found.
 *
 * find(element, names, scope, merged) -> tuple of lists, or one list if merged
 *   names   attribute names (str); an attribute matches by name with no namespace, as XPath's @name and
 *           lxml's get(name) do
 *   scope   0: every element of the element's document (XPath "//@name/.."); 1: the element's children;
 *           2: the element and its descendants
 *   merged  false: per name, the elements carrying it; true: one list of the elements carrying any
 *   Elements come in document order.
 *
 * Only the public prefixes of libxml2's xmlNode, xmlAttr and xmlDoc structs are declared here (their layout
 * has not changed in libxml2 2.x), and lxml's _Element prefix (PyObject_HEAD, _doc, _c_node). The module
 * refuses to load if lxml does not export elementFactory with the expected signature, and
 * worker/html/native.py checks it against a plain walk of a small tree before using it (else worker/html/dom.py
 * uses XPath).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_NAMES 8
#define XML_ELEMENT_NODE 1

typedef struct DNode DNode;
typedef struct DAttr DAttr;
struct DNode {
    void *_private;
    int type;
    const unsigned char *name;
    DNode *children, *last, *parent, *next, *prev;
    void *doc;
    void *ns;
    unsigned char *content;
    DAttr *properties;
};
struct DAttr {
    void *_private;
    int type;
    const unsigned char *name;
    DNode *children, *last, *parent;
    DAttr *next, *prev;
    void *doc;
    void *ns;
};
typedef struct {
    void *_private;
    int type;
    char *name;
    DNode *children;
} DDoc;
typedef struct {
    PyObject_HEAD
    PyObject *_doc;
    DNode *_c_node;
    PyObject *_tag;
} LElement;

typedef PyObject *(*factory_t)(PyObject *, DNode *);
static factory_t element_factory;
static PyTypeObject *element_type;

/* Bit i set: the element has an attribute names[i] (no namespace). */
static unsigned match(const DNode *n, const char **names, const size_t *lens, int count) {
    unsigned found = 0;
    for (const DAttr *a = n->properties; a != NULL; a = a->next) {
        if (a->ns != NULL || a->name == NULL) continue;
        for (int i = 0; i < count; i++) {
            if (!(found >> i & 1) && memcmp(a->name, names[i], lens[i] + 1) == 0) found |= 1u << i;
        }
    }
    return found;
}

static int add(PyObject *list, PyObject *doc, DNode *n) {
    PyObject *el = element_factory(doc, n);
    if (el == NULL) return -1;
    int r = PyList_Append(list, el);
    Py_DECREF(el);
    return r;
}

/* Visit one element: append it to the lists of the names it carries. */
static int visit(DNode *n, PyObject *doc, const char **names, const size_t *lens, int count, PyObject **lists,
                 int merged) {
    unsigned m = match(n, names, lens, count);
    if (!m) return 0;
    if (merged) return add(lists[0], doc, n);
    for (int i = 0; i < count; i++)
        if ((m >> i & 1) && add(lists[i], doc, n) < 0) return -1;
    return 0;
}

static PyObject *find(PyObject *self, PyObject *args) {
    PyObject *element, *names_obj;
    int scope, merged;
    if (!PyArg_ParseTuple(args, "OO!ip", &element, &PyTuple_Type, &names_obj, &scope, &merged)) return NULL;
    if (!PyObject_TypeCheck(element, element_type)) {
        PyErr_SetString(PyExc_TypeError, "find() needs an lxml element");
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(names_obj);
    if (count < 1 || count > MAX_NAMES) {
        PyErr_SetString(PyExc_ValueError, "find() takes 1 to 8 attribute names");
        return NULL;
    }
    const char *names[MAX_NAMES];
    size_t lens[MAX_NAMES];
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t n;
        names[i] = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names_obj, i), &n);
        if (names[i] == NULL) return NULL;
        lens[i] = (size_t)n;
    }
    LElement *el = (LElement *)element;
    DNode *node = el->_c_node;
    if (node == NULL || el->_doc == NULL) {
        PyErr_SetString(PyExc_ValueError, "find() needs an element of a document");
        return NULL;
    }
    PyObject *lists[MAX_NAMES];
    int nlists = merged ? 1 : (int)count;
    for (int i = 0; i < nlists; i++) {
        lists[i] = PyList_New(0);
        if (lists[i] == NULL) {
            while (i--) Py_DECREF(lists[i]);
            return NULL;
        }
    }
    PyObject *doc = el->_doc;
    int err = 0;
    if (scope == 1) {
        for (DNode *c = node->children; c != NULL && !err; c = c->next)
            if (c->type == XML_ELEMENT_NODE) err = visit(c, doc, names, lens, (int)count, lists, merged) < 0;
    } else {
        DNode *stop, *n;
        if (scope == 0) {  /* every node of the document: start at its first child, stop back at the document */
            stop = (DNode *)node->doc;
            n = stop != NULL ? ((DDoc *)stop)->children : NULL;
        } else {  /* the element's subtree */
            stop = node;
            n = node;
        }
        while (n != NULL && !err) {
            if (n->type == XML_ELEMENT_NODE) {
                err = visit(n, doc, names, lens, (int)count, lists, merged) < 0;
                if (err) break;
                if (n->children != NULL) {
                    n = n->children;
                    continue;
                }
            }
            if (n == stop) break;  /* (scope 2: an element without children) */
            while (n->next == NULL) {
                n = n->parent;
                if (n == NULL || n == stop) goto done;
            }
            n = n->next;
        }
    }
done:
    if (err) {
        for (int i = 0; i < nlists; i++) Py_DECREF(lists[i]);
        return NULL;
    }
    if (merged) return lists[0];
    PyObject *out = PyTuple_New(count);
    if (out == NULL) {
        for (int i = 0; i < nlists; i++) Py_DECREF(lists[i]);
        return NULL;
    }
    for (int i = 0; i < nlists; i++) PyTuple_SET_ITEM(out, i, lists[i]);
    return out;
}

#define XML_TEXT_NODE 3

/* The value of n's class attribute a as lxml's get("class") gives it: the one text child's UTF-8 decoded, or what
 * get() itself says when the value is not one text node. */
static PyObject *class_value(DAttr *a, PyObject *el) {
    DNode *c = a->children;
    if (c != NULL && c->type == XML_TEXT_NODE && c->next == NULL && c->content != NULL)
        return PyUnicode_DecodeUTF8((const char *)c->content, (Py_ssize_t)strlen((const char *)c->content), NULL);
    return PyObject_CallMethod(el, "get", "s", "class");
}

/* value.lower().split(), cached in split by value (a new reference; NULL with an error set). */
static PyObject *cached_tokens(PyObject *value, PyObject *split) {
    PyObject *toks = PyDict_GetItemWithError(split, value);  /* borrowed */
    if (toks != NULL) {
        Py_INCREF(toks);
        return toks;
    }
    if (PyErr_Occurred()) return NULL;
    PyObject *lower = PyObject_CallMethod(value, "lower", NULL);
    if (lower == NULL) return NULL;
    toks = PyObject_CallMethod(lower, "split", NULL);
    Py_DECREF(lower);
    if (toks != NULL && PyDict_SetItem(split, value, toks) < 0) Py_CLEAR(toks);
    return toks;
}

/* The libxml2 node of ``element`` (an lxml element of a document); NULL with an error naming ``fn`` if not. */
static DNode *element_node(PyObject *element, const char *fn) {
    if (!PyObject_TypeCheck(element, element_type)) {
        PyErr_Format(PyExc_TypeError, "%s() needs an lxml element", fn);
        return NULL;
    }
    LElement *el = (LElement *)element;
    if (el->_c_node == NULL || el->_doc == NULL) {
        PyErr_Format(PyExc_ValueError, "%s() needs an element of a document", fn);
        return NULL;
    }
    return el->_c_node;
}

/* One class-bearing element: its proxy, its position and its tokens into the four structures. */
static int index_one(DNode *n, DAttr *a, PyObject *doc, PyObject *order, PyObject *tokens, PyObject *by_class,
                     PyObject *pos, PyObject *split) {
    PyObject *el = element_factory(doc, n);
    if (el == NULL) return -1;
    int r = -1;
    PyObject *value = NULL, *toks = NULL, *at = NULL;
    value = class_value(a, el);
    if (value == NULL) goto out;
    if (value == Py_None) {  /* (cannot happen: a was found as a class attribute) */
        PyErr_SetString(PyExc_ValueError, "class_index(): an element lost its class attribute");
        goto out;
    }
    toks = cached_tokens(value, split);
    if (toks == NULL) goto out;
    at = PyLong_FromSsize_t(PyList_GET_SIZE(order));
    if (at == NULL || PyDict_SetItem(pos, el, at) < 0 || PyList_Append(order, el) < 0
            || PyList_Append(tokens, toks) < 0)
        goto out;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(toks); i++) {
        PyObject *token = PyList_GET_ITEM(toks, i);
        PyObject *els = PyDict_GetItemWithError(by_class, token);  /* borrowed */
        if (els == NULL) {
            if (PyErr_Occurred()) goto out;
            els = PyList_New(1);
            if (els == NULL) goto out;
            Py_INCREF(el);
            PyList_SET_ITEM(els, 0, el);
            int bad = PyDict_SetItem(by_class, token, els);
            Py_DECREF(els);
            if (bad < 0) goto out;
        } else if (PyList_GET_ITEM(els, PyList_GET_SIZE(els) - 1) != el) {  /* class="vcard vcard" */
            if (PyList_Append(els, el) < 0) goto out;
        }
    }
    r = 0;
out:
    Py_XDECREF(at);
    Py_XDECREF(toks);
    Py_XDECREF(value);
    Py_DECREF(el);
    return r;
}

/* class_index(element) -> (order, tokens, by_class, pos): see quadfleet.worker.html.dom.class_index_py, the
 * definition this is tested against. */
static PyObject *class_index(PyObject *self, PyObject *element) {
    DNode *node = element_node(element, "class_index");
    if (node == NULL) return NULL;
    LElement *el = (LElement *)element;
    PyObject *order = PyList_New(0), *tokens = PyList_New(0), *by_class = PyDict_New(), *pos = PyDict_New();
    PyObject *split = PyDict_New();
    PyObject *out = NULL;
    if (order == NULL || tokens == NULL || by_class == NULL || pos == NULL || split == NULL) goto done;
    DNode *n = node;
    while (n != NULL) {
        if (n->type == XML_ELEMENT_NODE) {
            for (DAttr *a = n->properties; a != NULL; a = a->next) {
                if (a->ns == NULL && a->name != NULL && strcmp((const char *)a->name, "class") == 0) {
                    if (index_one(n, a, el->_doc, order, tokens, by_class, pos, split) < 0) goto done;
                    break;
                }
            }
            if (n->children != NULL) {
                n = n->children;
                continue;
            }
        }
        if (n == node) break;
        while (n->next == NULL) {
            n = n->parent;
            if (n == NULL || n == node) goto walked;
        }
        n = n->next;
    }
walked:
    out = PyTuple_Pack(4, order, tokens, by_class, pos);
done:
    Py_XDECREF(order);
    Py_XDECREF(tokens);
    Py_XDECREF(by_class);
    Py_XDECREF(pos);
    Py_XDECREF(split);
    return out;
}

/* Whether a class value holds one of ``roots`` (a tuple of lower-case ASCII bytes) as a token of
 * value.lower().split(): 1 or 0; -1 when the bytes cannot tell (not plain ASCII: str.lower and str.split
 * treat some other characters as letters or white space), and the caller asks Python. */
static int ascii_root_hit(const unsigned char *s, PyObject *roots) {
    const unsigned char *p = s;
    for (;;) {
        while (*p == ' ' || (*p >= 9 && *p <= 13) || (*p >= 28 && *p <= 31)) p++;
        if (*p == 0) return 0;
        const unsigned char *start = p;
        while (*p && !(*p == ' ' || (*p >= 9 && *p <= 13) || (*p >= 28 && *p <= 31))) {
            if (*p >= 0x80) return -1;
            p++;
        }
        Py_ssize_t len = p - start;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(roots); i++) {
            PyObject *r = PyTuple_GET_ITEM(roots, i);
            if (PyBytes_GET_SIZE(r) == len) {
                const char *rs = PyBytes_AS_STRING(r);
                Py_ssize_t k = 0;
                while (k < len) {
                    unsigned char c = start[k];
                    if (c >= 'A' && c <= 'Z') c += 32;
                    if (c != (unsigned char)rs[k]) break;
                    k++;
                }
                if (k == len) return 1;
            }
        }
    }
}

/* The root test through Python, for values the bytes cannot decide: value.lower().split() (cached in split
 * by value, as index_one caches it) shares a token with roots_set. */
static int python_root_hit(DNode *n, DAttr *a, PyObject *doc, PyObject *split, PyObject *roots_set) {
    PyObject *el = element_factory(doc, n);
    if (el == NULL) return -1;
    PyObject *value = class_value(a, el);
    Py_DECREF(el);
    if (value == NULL) return -1;
    if (value == Py_None) {
        Py_DECREF(value);
        return 0;
    }
    PyObject *toks = cached_tokens(value, split);
    Py_DECREF(value);
    if (toks == NULL) return -1;
    int hit = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(toks) && !hit; i++) {
        hit = PySet_Contains(roots_set, PyList_GET_ITEM(toks, i));
        if (hit < 0) break;
    }
    Py_DECREF(toks);
    return hit;
}

typedef struct { DNode *node; PyObject *el; } OpenEl;

/* class_index_roots(element, roots, roots_set) -> (order, tokens, by_class, pos, ends): class_index's answer
 * for the class-bearing elements that are, or are inside, an element with a root class (roots: those tokens
 * as lower-case ASCII bytes; roots_set: the same as str). Every other class-bearing element keeps its
 * position (its slots in order and tokens hold None) but gets no proxy: on real pages with a hCard those are
 * about 96% of them, and their proxies were most of the index's time. ends: each indexed element's end,
 * the position of the first class-bearing element after its subtree. See worker/extractors/microformats/index.py. */
static PyObject *class_index_roots(PyObject *self, PyObject *args) {
    PyObject *element, *roots, *roots_set;
    if (!PyArg_ParseTuple(args, "OO!O!", &element, &PyTuple_Type, &roots, &PyFrozenSet_Type, &roots_set))
        return NULL;
    DNode *node = element_node(element, "class_index_roots");
    if (node == NULL) return NULL;
    LElement *el = (LElement *)element;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(roots); i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(roots, i))) {
            PyErr_SetString(PyExc_TypeError, "class_index_roots(): roots must be bytes");
            return NULL;
        }
    }
    PyObject *order = PyList_New(0), *tokens = PyList_New(0), *by_class = PyDict_New(), *pos = PyDict_New();
    PyObject *split = PyDict_New(), *ends = PyDict_New();
    PyObject *out = NULL;
    Py_ssize_t cap = 64, depth = 0;
    OpenEl *open = PyMem_Malloc(cap * sizeof(OpenEl));
    if (order == NULL || tokens == NULL || by_class == NULL || pos == NULL || split == NULL || ends == NULL
            || open == NULL) goto done;
    DNode *n = node;
    while (n != NULL) {
        if (n->type == XML_ELEMENT_NODE) {
            for (DAttr *a = n->properties; a != NULL; a = a->next) {
                if (a->ns == NULL && a->name != NULL && strcmp((const char *)a->name, "class") == 0) {
                    int hit = 1;
                    if (depth == 0) {
                        DNode *c = a->children;
                        hit = (c != NULL && c->type == XML_TEXT_NODE && c->next == NULL && c->content != NULL)
                            ? ascii_root_hit(c->content, roots) : -1;
                        if (hit < 0) hit = python_root_hit(n, a, el->_doc, split, roots_set);
                        if (hit < 0) goto done;
                    }
                    if (hit) {
                        if (index_one(n, a, el->_doc, order, tokens, by_class, pos, split) < 0) goto done;
                        if (depth == cap) {
                            cap *= 2;
                            OpenEl *grown = PyMem_Realloc(open, cap * sizeof(OpenEl));
                            if (grown == NULL) { PyErr_NoMemory(); goto done; }
                            open = grown;
                        }
                        open[depth].node = n;
                        open[depth].el = PyList_GET_ITEM(order, PyList_GET_SIZE(order) - 1);  /* (order holds it) */
                        depth++;
                    } else if (PyList_Append(order, Py_None) < 0 || PyList_Append(tokens, Py_None) < 0) {
                        goto done;
                    }
                    break;
                }
            }
            if (n->children != NULL) {
                n = n->children;
                continue;
            }
        }
        for (;;) {  /* n and its subtree are walked: an indexed element's end is where the walk stands */
            if (depth > 0 && open[depth - 1].node == n) {
                depth--;
                PyObject *end = PyLong_FromSsize_t(PyList_GET_SIZE(order));
                if (end == NULL || PyDict_SetItem(ends, open[depth].el, end) < 0) { Py_XDECREF(end); goto done; }
                Py_DECREF(end);
            }
            if (n == node) goto walked;
            if (n->next != NULL) {
                n = n->next;
                break;
            }
            n = n->parent;
            if (n == NULL) goto walked;
        }
    }
walked:
    out = PyTuple_Pack(5, order, tokens, by_class, pos, ends);
done:
    PyMem_Free(open);
    Py_XDECREF(order);
    Py_XDECREF(tokens);
    Py_XDECREF(by_class);
    Py_XDECREF(pos);
    Py_XDECREF(split);
    Py_XDECREF(ends);
    return out;
}

static PyMethodDef methods[] = {
    {"find", find, METH_VARARGS, "find(element, names, scope, merged): the elements carrying the attributes "
     "(see quadfleet.worker.html.dom)."},
    {"class_index", class_index, METH_O, "class_index(element): the class-bearing elements of its subtree, their "
     "tokens, the elements by token and their positions (see quadfleet.worker.html.dom)."},
    {"class_index_roots", class_index_roots, METH_VARARGS, "class_index_roots(element, roots, roots_set): "
     "class_index for the elements in or under a root class only, with their ends (see quadfleet.worker.html.dom)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dom", "Elements by attribute, found in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__dom(void) {
    PyObject *etree = PyImport_ImportModule("lxml.etree");
    if (etree == NULL) return NULL;
    PyObject *capi = PyObject_GetAttrString(etree, "__pyx_capi__");
    PyObject *type = PyObject_GetAttrString(etree, "_Element");
    Py_DECREF(etree);
    if (capi == NULL || type == NULL || !PyType_Check(type) || !PyDict_Check(capi)) {
        Py_XDECREF(capi);
        Py_XDECREF(type);
        PyErr_SetString(PyExc_ImportError, "lxml.etree has no C API here");
        return NULL;
    }
    PyObject *capsule = PyDict_GetItemString(capi, "elementFactory");
    const char *signature = "struct LxmlElement *(struct LxmlDocument *, xmlNode *)";
    void *fn = capsule != NULL ? PyCapsule_GetPointer(capsule, signature) : NULL;
    Py_DECREF(capi);
    if (fn == NULL) {
        Py_DECREF(type);
        PyErr_Clear();
        PyErr_SetString(PyExc_ImportError, "lxml.etree's elementFactory is not the expected one");
        return NULL;
    }
    element_factory = (factory_t)fn;
    element_type = (PyTypeObject *)type;  /* kept for the life of the process */
    return PyModule_Create(&module);
}
