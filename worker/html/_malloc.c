/* libxml2's malloc, routed to mimalloc inside a running process (worker/allocator.py says when).

   Why: libxml2 builds and frees every parsed page's tree node by node, and glibc's malloc spends about a
   tenth of an extraction on that. Preloading mimalloc fixes it but needs a second start of the process;
   libxml2 instead lets its allocator be chosen at any time (xmlMemSetup), so mimalloc is opened here with
   dlopen, privately (RTLD_LOCAL: nothing else in the process binds to it), and handed to the libxml2 that
   lxml carries (found through lxml.etree's own shared object, whether it holds libxml2 or links it).

   Memory libxml2 took before the switch (lxml's import, a tree already parsed) is still freed and resized
   by glibc: mi_is_in_heap_region tells mimalloc's blocks from the others (mimalloc's map of its own segments;
   no other block can lie in one), so each block goes back to the allocator it came from. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

typedef void (*free_fn)(void *);
typedef void *(*malloc_fn)(size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef char *(*strdup_fn)(const char *);
typedef bool (*owned_fn)(const void *);
typedef int (*mem_setup_fn)(free_fn, malloc_fn, realloc_fn, strdup_fn);
typedef int (*mem_get_fn)(free_fn *, malloc_fn *, realloc_fn *, strdup_fn *);

static malloc_fn mi_malloc_;
static free_fn mi_free_;
static realloc_fn mi_realloc_;
static strdup_fn mi_strdup_;
static owned_fn mi_owned_;
static const char *routed_to;  /* the library's path once routed (the routing is for the process's life) */

static void routed_free(void *p) {
    if (p == NULL) return;
    if (mi_owned_(p)) mi_free_(p);
    else free(p);
}

static void *routed_realloc(void *p, size_t size) {
    if (p == NULL || mi_owned_(p)) return mi_realloc_(p, size);
    return realloc(p, size);  /* a block from before the switch stays glibc's */
}

static const char *why(void) {
    const char *error = dlerror();
    return error != NULL ? error : "no reason given";
}

static void *symbol(void *handle, const char *name, const char *where) {
    void *found = dlsym(handle, name);
    if (found == NULL) PyErr_Format(PyExc_OSError, "%s has no %s", where, name);
    return found;
}

/* route_libxml2(library, holder): libxml2's malloc becomes the mimalloc at the path `library`; `holder` is the
   path of an already loaded shared object through which libxml2's symbols are found (lxml.etree's). Raises
   OSError saying what is missing; nothing changes then. Once routed, a second call answers nothing more. */
static PyObject *route_libxml2(PyObject *self, PyObject *args) {
    const char *library, *holder;
    if (!PyArg_ParseTuple(args, "ss", &library, &holder)) return NULL;
    if (routed_to != NULL) Py_RETURN_NONE;
#ifndef RTLD_NOLOAD
    return PyErr_Format(PyExc_OSError, "this system's dlopen cannot find a loaded library (no RTLD_NOLOAD)");
#else
    void *xml = dlopen(holder, RTLD_NOW | RTLD_NOLOAD);
    if (xml == NULL) return PyErr_Format(PyExc_OSError, "%s is not loaded: %s", holder, why());
    mem_setup_fn setup = (mem_setup_fn)symbol(xml, "xmlMemSetup", holder);
    mem_get_fn get = setup ? (mem_get_fn)symbol(xml, "xmlMemGet", holder) : NULL;
    if (get == NULL) { dlclose(xml); return NULL; }
    void *mi = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (mi == NULL) {
        PyErr_Format(PyExc_OSError, "cannot open %s: %s", library, why());  /* (before dlclose clears it) */
        dlclose(xml);
        return NULL;
    }
    malloc_fn m = (malloc_fn)symbol(mi, "mi_malloc", library);
    free_fn f = m ? (free_fn)symbol(mi, "mi_free", library) : NULL;
    realloc_fn r = f ? (realloc_fn)symbol(mi, "mi_realloc", library) : NULL;
    strdup_fn s = r ? (strdup_fn)symbol(mi, "mi_strdup", library) : NULL;
    owned_fn o = s ? (owned_fn)symbol(mi, "mi_is_in_heap_region", library) : NULL;
    if (o == NULL) { dlclose(mi); dlclose(xml); return NULL; }
    mi_malloc_ = m; mi_free_ = f; mi_realloc_ = r; mi_strdup_ = s; mi_owned_ = o;
    free_fn gf = NULL; malloc_fn gm = NULL; realloc_fn gr = NULL; strdup_fn gs = NULL;
    if (setup(routed_free, mi_malloc_, routed_realloc, mi_strdup_) != 0 || get(&gf, &gm, &gr, &gs) != 0
            || gf != routed_free || gm != mi_malloc_) {
        /* (xmlMemSetup changes nothing when it refuses) */
        return PyErr_Format(PyExc_OSError, "libxml2 in %s did not take the allocator (xmlMemSetup)", holder);
    }
    routed_to = strdup(library);  /* (both handles stay open: libxml2 calls into mimalloc from now on) */
    Py_RETURN_NONE;
#endif
}

/* routed(): the library's path if libxml2's malloc was routed in this process (or its parent, before a fork),
   else None. */
static PyObject *routed(PyObject *self, PyObject *unused) {
    if (routed_to == NULL) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(routed_to);
}

static PyMethodDef methods[] = {
    {"route_libxml2", route_libxml2, METH_VARARGS, "Route libxml2's malloc to the mimalloc at a path."},
    {"routed", routed, METH_NOARGS, "The library libxml2's malloc was routed to, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_malloc", "libxml2's malloc routed to mimalloc.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__malloc(void) { return PyModule_Create(&module); }
