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
    toks = PyDict_GetItemWithError(split, value);  /* borrowed */
    if (toks != NULL) {
        Py_INCREF(toks);
    } else {
        if (PyErr_Occurred()) goto out;
        PyObject *lower = PyObject_CallMethod(value, "lower", NULL);
        if (lower == NULL) goto out;
        toks = PyObject_CallMethod(lower, "split", NULL);
        Py_DECREF(lower);
        if (toks == NULL || PyDict_SetItem(split, value, toks) < 0) goto out;
    }
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
    if (!PyObject_TypeCheck(element, element_type)) {
        PyErr_SetString(PyExc_TypeError, "class_index() needs an lxml element");
        return NULL;
    }
    LElement *el = (LElement *)element;
    DNode *node = el->_c_node;
    if (node == NULL || el->_doc == NULL) {
        PyErr_SetString(PyExc_ValueError, "class_index() needs an element of a document");
        return NULL;
    }
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

static PyMethodDef methods[] = {
    {"find", find, METH_VARARGS, "find(element, names, scope, merged): the elements carrying the attributes "
     "(see quadfleet.worker.html.dom)."},
    {"class_index", class_index, METH_O, "class_index(element): the class-bearing elements of its subtree, their "
     "tokens, the elements by token and their positions (see quadfleet.worker.html.dom)."},
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
