/* A gzip member inflated whole, in one call, by libdeflate (worker/archive/gzip_members.py's whole_member says when).

   Why: in a Common Crawl WARC each record is its own gzip member, and inflating them is about a seventh of an
   extraction on crawl-like pages. libdeflate inflates a whole member about a third faster than FastWARC's
   streaming zlib-rs (40.6 against 54.2 ms for the bench's crawl mix; ISA-L's inflate takes 45.5 ms) and,
   unlike Python's binding of it, says how many input bytes the member took: the exact start of the next
   record, with the member's CRC-32 and length checked on the way. (Measured again on the x10 crawl mix,
   4,840 members, 572 MB inflated: libdeflate 390 ms, ISA-L 570 ms, zlib 1,080 ms, the system's libdeflate 1.14
   448 ms.) kept() hands the reader the member held in an Inflated, so that its body becomes the page's bytes
   without a copy (see Inflated below); record() also finds where the member ends and reads its usual record
   (_inflate_fields.c), in the one call a record.

   libdeflate is not linked at build time (no headers or library are needed to build quadfleet): the library
   is opened with dlopen, privately, from a path the caller gives (the ``deflate`` package's extension, which
   carries libdeflate and exports its functions, or a system libdeflate.so.0). Its API has been stable since
   libdeflate 1.0; the two functions used here are declared below as its libdeflate.h declares them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include "_inflate.h"

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
static PyObject *inflate_member(PyObject *args, Py_ssize_t *used_ret);

static PyObject *member(PyObject *self, PyObject *args) {
    Py_ssize_t used = 0;
    PyObject *out = inflate_member(args, &used);
    if (out == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nn)", out, used);
}

/* A member inflated whole and kept here, unseen by Python, so that its HTML body can become the page's bytes
   without a copy: Python reads the headers from small copies (part), then take() moves the body to the front
   of the member's own bytes object and shrinks it (a move within memory just written, where a slice is a
   fresh allocation and a copy: an eighth of reading the crawl mix). */
typedef struct {
    PyObject_HEAD
    PyObject *data; /* the inflated bytes, owned here alone (refcount 1); NULL once taken */
} Inflated;

static void inflated_dealloc(Inflated *self) {
    Py_XDECREF(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t inflated_length(Inflated *self) { return self->data == NULL ? 0 : PyBytes_GET_SIZE(self->data); }

/* The bounds a, b of a slice [a:b] of n bytes, as Python clamps them (a, b >= 0 given). */
static int inflated_bounds(Inflated *self, PyObject *args, Py_ssize_t *a, Py_ssize_t *b) {
    if (!PyArg_ParseTuple(args, "nn", a, b)) return -1;
    if (self->data == NULL) {
        PyErr_SetString(PyExc_ValueError, "the member was taken");
        return -1;
    }
    if (*a < 0 || *b < 0) {
        PyErr_SetString(PyExc_ValueError, "negative bound");
        return -1;
    }
    Py_ssize_t n = PyBytes_GET_SIZE(self->data);
    if (*a > n) *a = n;
    if (*b > n) *b = n;
    if (*b < *a) *b = *a;
    return 0;
}

/* part(a, b) -> bytes: a copy of the member's bytes [a:b], as slicing them would give. */
static PyObject *inflated_part(Inflated *self, PyObject *args) {
    Py_ssize_t a, b;
    if (inflated_bounds(self, args, &a, &b) < 0) return NULL;
    return PyBytes_FromStringAndSize(PyBytes_AS_STRING(self->data) + a, b - a);
}

/* The bytes [a:b] of ``data`` (a new reference, taken: consumed), in its own bytes object: moved to its front and
   shrunk where it is held nowhere else. */
static PyObject *take_bytes(PyObject *data, Py_ssize_t a, Py_ssize_t b) {
    if (Py_REFCNT(data) != 1) { /* (never: it is not handed out before) */
        PyObject *copy = PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + a, b - a);
        Py_DECREF(data);
        return copy;
    }
    if (a == 0 && b == PyBytes_GET_SIZE(data)) return data;
    if (a > 0) memmove(PyBytes_AS_STRING(data), PyBytes_AS_STRING(data) + a, (size_t)(b - a));
    if (_PyBytes_Resize(&data, b - a) < 0) return NULL; /* (it freed data) */
    return data;
}

/* take(a, b) -> bytes: the member's bytes [a:b], in its own bytes object (moved to its front and shrunk), which
   leaves here: part and take fail after it. */
static PyObject *inflated_take(Inflated *self, PyObject *args) {
    Py_ssize_t a, b;
    if (inflated_bounds(self, args, &a, &b) < 0) return NULL;
    PyObject *data = self->data;
    self->data = NULL;
    return take_bytes(data, a, b);
}

/* fields(max_record, mapping=None) -> (hdr_len, length, warc, uris, http_len, http, html) or None: see
   record_fields (``mapping``: the type of the dicts, a dict type; None: dict). */
static PyObject *inflated_fields(Inflated *self, PyObject *args) {
    Py_ssize_t max_record;
    PyObject *mapping = Py_None;
    if (!PyArg_ParseTuple(args, "n|O", &max_record, &mapping)) return NULL;
    if (self->data == NULL) {
        PyErr_SetString(PyExc_ValueError, "the member was taken");
        return NULL;
    }
    return record_fields((const unsigned char *)PyBytes_AS_STRING(self->data), PyBytes_GET_SIZE(self->data),
                         max_record, mapping == Py_None ? NULL : mapping);
}

static PyMethodDef inflated_methods[] = {
    {"part", (PyCFunction)inflated_part, METH_VARARGS, "part(a, b) -> bytes: a copy of the bytes [a:b]."},
    {"take", (PyCFunction)inflated_take, METH_VARARGS,
     "take(a, b) -> bytes: the bytes [a:b], without a copy; the member is empty after it."},
    {"fields", (PyCFunction)inflated_fields, METH_VARARGS, "fields(max_record, mapping=None) -> (hdr_len, length, "
     "warc, uris, http_len, http, html) or None: the usual headers."},
    {NULL, NULL, 0, NULL}};

static PySequenceMethods inflated_sequence = {.sq_length = (lenfunc)inflated_length};

static PyTypeObject InflatedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "quadfleet.worker.archive._inflate.Inflated",
    .tp_basicsize = sizeof(Inflated),
    .tp_dealloc = (destructor)inflated_dealloc,
    .tp_as_sequence = &inflated_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A gzip member inflated whole, read in parts and its body taken without a copy (kept()).",
    .tp_methods = inflated_methods,
};

/* The gzip member at in[0] inflated into exactly ``size`` bytes: a new bytes object and the bytes it took of the
   ``len`` given (into *used); NULL with no error set if it is not a whole valid member of that size (with one if
   no memory). */
static PyObject *gunzip(const unsigned char *in, Py_ssize_t len, Py_ssize_t size, Py_ssize_t *used_ret) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL) return NULL;
    size_t used = 0, made = 0;
    int result = gunzip_ex(decompressor, in, (size_t)len, PyBytes_AS_STRING(out), (size_t)size, &used, &made);
    if (result != 0 || made != (size_t)size) {
        Py_DECREF(out);
        return NULL;
    }
    *used_ret = (Py_ssize_t)used;
    return out;
}

/* The member at data[lo] inflated into exactly ``size`` bytes, as gunzip (args: data, lo, hi, size). */
static PyObject *inflate_member(PyObject *args, Py_ssize_t *used_ret) {
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
    PyObject *out = gunzip((const unsigned char *)buf.buf + lo, hi - lo, size, used_ret);
    PyBuffer_Release(&buf);
    return out;
}

/* (Inflated holding out, used): takes the reference to out, also on failure. */
static PyObject *hold(PyObject *out, Py_ssize_t used) {
    Inflated *held = PyObject_New(Inflated, &InflatedType);
    if (held == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    held->data = out;
    return Py_BuildValue("(Nn)", (PyObject *)held, used);
}

/* kept(data, lo, hi, size) -> (Inflated, used) or None: as member(), the member held in an Inflated. */
static PyObject *kept(PyObject *self, PyObject *args) {
    Py_ssize_t used = 0;
    PyObject *out = inflate_member(args, &used);
    if (out == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    return hold(out, used);
}

/* record(data, lo, hi, eof, size_max, max_record, limit, mapping): gzip_members.whole_member and _read_whole's
   reading of the usual record in one call (their Python, the frames and objects between them, was a fifth of the
   time a member took beside its inflate). data[lo:hi] holds the stream from a member's start (``eof``: and ends
   there; data[hi:] is not read). The member ends at the first member header after data[lo + 20] (else at hi, if
   ``eof``), whose 4 bytes before give its inflated size, up to ``size_max``: it must inflate to exactly that
   and take exactly those bytes. Answers (Python's whole_member, the definition, decides wherever this is not
   sure): False, no member header in data[lo + 20:hi] and more data to come (then read more and ask again);
   None, anything else (a header CRC, a member that does not end there, ...): whole_member's turn; (Inflated,
   used): the member, its record not the usual one (record_fields says None); (warc, used, hdr_len, length, http,
   body): the usual record's fields (dicts made by ``mapping``) and its HTML body up to ``limit`` + 1 bytes
   (moved to the front of the member's bytes), or None if not HTML. */
static PyObject *record(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t lo, hi, size_max, max_record, limit, at, end = -1, used = 0;
    int eof;
    PyObject *mapping, *out, *got;
    if (!PyArg_ParseTuple(args, "y*nnpnnnO", &buf, &lo, &hi, &eof, &size_max, &max_record, &limit, &mapping))
        return NULL;
    if (decompressor == NULL || lo < 0 || hi > buf.len || lo > hi) {
        PyBuffer_Release(&buf);
        return PyErr_Format(decompressor == NULL ? PyExc_RuntimeError : PyExc_ValueError, "record(): no libdeflate "
                            "opened, or lo %zd, hi %zd do not fit %zd bytes", lo, hi, buf.len);
    }
    const unsigned char *d = buf.buf;
    if (hi - lo >= 4 && d[lo + 3] & 0x02) { /* FHCRC: zlib checks it, libdeflate does not */
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    for (at = lo + 20; end < 0 && at + 2 <= hi;) { /* _scan.gzip_member_at, the third byte before hi */
        const unsigned char *q = memchr(d + at, 0x1f, (size_t)(hi - 1 - at));
        if (q == NULL) break;
        at = q - d;
        if (d[at + 1] == 0x8b && at + 2 < hi && d[at + 2] == 0x08) end = at;
        at++;
    }
    if (end < 0 && !eof) {
        PyBuffer_Release(&buf);
        Py_RETURN_FALSE;
    }
    end = end < 0 ? hi : end;
    Py_ssize_t size = end - lo < 20 ? 0 : (Py_ssize_t)(d[end - 4] | d[end - 3] << 8 | d[end - 2] << 16 |
                                                      (uint32_t)d[end - 1] << 24);
    if (end - lo < 20 || size > size_max) {
        PyBuffer_Release(&buf);
        Py_RETURN_NONE;
    }
    out = gunzip(d + lo, end - lo, size, &used);
    PyBuffer_Release(&buf);
    if (out == NULL || used != end - lo) {
        Py_XDECREF(out);
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    mapping = mapping == Py_None ? NULL : mapping;
    got = record_fields((const unsigned char *)PyBytes_AS_STRING(out), size, max_record, mapping);
    if (got == Py_None) { /* (not the usual record: _read_record reads it from the member) */
        Py_DECREF(got);
        return hold(out, used);
    }
    if (got == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    PyObject **item = &PyTuple_GET_ITEM(got, 0);
    Py_ssize_t hdr_len = PyLong_AsSsize_t(item[0]), length = PyLong_AsSsize_t(item[1]);
    Py_ssize_t http_len = PyLong_AsSsize_t(item[4]), stop = http_len + limit + 1;
    PyObject *body = Py_None;
    if (PyTuple_GET_ITEM(got, 6) == Py_True) { /* _read_whole's take of the body, up to the limit and 1 byte */
        Py_ssize_t a = hdr_len + http_len, b = hdr_len + (length < stop ? length : stop);
        a = a < size ? a : size, b = b < size ? b : size, b = b < a ? a : b;
        body = take_bytes(out, a, b);
        if (body == NULL) {
            Py_DECREF(got);
            return NULL;
        }
    } else {
        Py_DECREF(out);
        Py_INCREF(body);
    }
    PyObject *result = Py_BuildValue("(OnnnON)", PyTuple_GET_ITEM(got, 2), used, hdr_len, length,
                                     PyTuple_GET_ITEM(got, 5), body);
    Py_DECREF(got);
    return result;
}

static PyMethodDef methods[] = {
    {"open", open_library, METH_VARARGS, "open(path): take libdeflate's gzip decompressor from that shared object."},
    {"member", member, METH_VARARGS, "member(data, lo, hi, size) -> (bytes, used) or None: the gzip member at "
     "data[lo], inflated whole into exactly size bytes, and the bytes it took."},
    {"kept", kept, METH_VARARGS, "kept(data, lo, hi, size) -> (Inflated, used) or None: as member(), the member "
     "held in an Inflated, whose body take() hands over without a copy."},
    {"record", record, METH_VARARGS, "record(data, lo, hi, eof, size_max, max_record, limit, mapping) -> False, "
     "None, (Inflated, used) or (warc, used, hdr_len, length, http, body): a member and its usual record, read."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_inflate",
                                    "A gzip member inflated whole by libdeflate, opened at run time.", -1, methods};

PyMODINIT_FUNC PyInit__inflate(void) {
    if (PyType_Ready(&InflatedType) < 0) return NULL;
    if (fields_init() < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&InflatedType);
    if (PyModule_AddObject(m, "Inflated", (PyObject *)&InflatedType) < 0) {
        Py_DECREF(&InflatedType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
