/* A gzip member inflated whole, in one call, by libdeflate (worker/archive/gzip_members.py's whole_member says when).

   Why: in a Common Crawl WARC each record is its own gzip member, and inflating them is about a seventh of an
   extraction on crawl-like pages. libdeflate inflates a whole member about a third faster than FastWARC's
   streaming zlib-rs (40.6 against 54.2 ms for the bench's crawl mix; ISA-L's inflate takes 45.5 ms) and,
   unlike Python's binding of it, says how many input bytes the member took: the exact start of the next
   record, with the member's CRC-32 and length checked on the way.

   libdeflate is not linked at build time (no headers or library are needed to build quadfleet): the library
   is opened with dlopen, privately, from a path the caller gives (the ``deflate`` package's extension, which
   carries libdeflate and exports its functions, or a system libdeflate.so.0). Its API has been stable since
   libdeflate 1.0; the two functions used here are declared below as its libdeflate.h declares them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>

struct libdeflate_decompressor;
typedef struct libdeflate_decompressor *(*alloc_fn)(void);
/* libdeflate_gzip_decompress_ex(d, in, in_nbytes, out, out_nbytes_avail, actual_in_nbytes_ret,
   actual_out_nbytes_ret): 0 on success (LIBDEFLATE_SUCCESS), else bad data or too little room. */
typedef int (*gunzip_fn)(struct libdeflate_decompressor *, const void *, size_t, void *, size_t, size_t *,
                         size_t *);

static gunzip_fn gunzip_ex;
static struct libdeflate_decompressor *decompressor;  /* one for the process: calls hold the GIL */

/* open(path): take libdeflate's decompressor from the shared object at ``path``. Raises OSError saying what
   is missing; nothing changes then. Once opened, a second call does nothing. */
static PyObject *open_library(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    if (decompressor != NULL) Py_RETURN_NONE;
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *error = dlerror();
        return PyErr_Format(PyExc_OSError, "cannot open %s: %s", path, error ? error : "no reason given");
    }
    alloc_fn alloc = (alloc_fn)dlsym(handle, "libdeflate_alloc_decompressor");
    gunzip_fn gunzip = (gunzip_fn)dlsym(handle, "libdeflate_gzip_decompress_ex");
    if (alloc == NULL || gunzip == NULL) {
        dlclose(handle);
        return PyErr_Format(PyExc_OSError, "%s does not export libdeflate's gzip decompressor", path);
    }
    struct libdeflate_decompressor *d = alloc();
    if (d == NULL) {
        dlclose(handle);
        return PyErr_NoMemory();
    }
    gunzip_ex = gunzip;
    decompressor = d;  /* (the handle stays open for the process's life) */
    Py_RETURN_NONE;
}

/* member(data, lo, hi, size) -> (bytes, used) or None: the gzip member that starts at data[lo], inflated into
   exactly ``size`` bytes, and ``used``, the bytes it took from data[lo:hi] (its end: lo + used). None if
   data[lo:hi] does not start with a whole valid member (header, deflate stream, CRC-32 and length checked by
   libdeflate) that inflates to exactly ``size`` bytes. Bytes after the member in data[lo:hi] are not read. */
static PyObject *member(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t lo, hi, size;
    if (!PyArg_ParseTuple(args, "y*nnn", &buf, &lo, &hi, &size)) return NULL;
    if (decompressor == NULL) {
        PyBuffer_Release(&buf);
        return PyErr_Format(PyExc_RuntimeError, "no libdeflate was opened");
    }
    if (lo < 0 || hi > buf.len || lo > hi || size < 0) {
        PyBuffer_Release(&buf);
        return PyErr_Format(PyExc_ValueError, "member(): lo %zd, hi %zd, size %zd do not fit %zd bytes", lo, hi,
                            size, buf.len);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL) {
        PyBuffer_Release(&buf);
        return NULL;
    }
    size_t used = 0, made = 0;
    int result = gunzip_ex(decompressor, (const char *)buf.buf + lo, (size_t)(hi - lo), PyBytes_AS_STRING(out),
                           (size_t)size, &used, &made);
    PyBuffer_Release(&buf);
    if (result != 0 || made != (size_t)size) {
        Py_DECREF(out);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nn)", out, (Py_ssize_t)used);
}

static PyMethodDef methods[] = {
    {"open", open_library, METH_VARARGS, "open(path): take libdeflate's gzip decompressor from that shared object."},
    {"member", member, METH_VARARGS, "member(data, lo, hi, size) -> (bytes, used) or None: the gzip member at "
     "data[lo], inflated whole into exactly size bytes, and the bytes it took."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_inflate",
                                    "A gzip member inflated whole by libdeflate, opened at run time.", -1, methods};

PyMODINIT_FUNC PyInit__inflate(void) { return PyModule_Create(&module); }
