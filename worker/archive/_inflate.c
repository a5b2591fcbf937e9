/* A gzip member inflated whole, in one call, by libdeflate (worker/archive/gzip_members.py's whole_member says when).

   Why: in a Common Crawl WARC each record is its own gzip member, and inflating them is about a seventh of an
   extraction on crawl-like pages. libdeflate inflates a whole member about a third faster than FastWARC's
   streaming zlib-rs (40.6 against 54.2 ms for the bench's crawl mix; ISA-L's inflate takes 45.5 ms) and,
   unlike Python's binding of it, says how many input bytes the member took: the exact start of the next
   record, with the member's CRC-32 and length checked on the way. (Measured again on the x10 crawl mix,
   4,840 members, 572 MB inflated: libdeflate 390 ms, ISA-L 570 ms, zlib 1,080 ms, the system's libdeflate 1.14
   448 ms.) kept() hands the reader the member held in an Inflated, so that its body becomes the page's bytes
   without a copy (see Inflated below).

   libdeflate is not linked at build time (no headers or library are needed to build quadfleet): the library
   is opened with dlopen, privately, from a path the caller gives (the ``deflate`` package's extension, which
   carries libdeflate and exports its functions, or a system libdeflate.so.0). Its API has been stable since
   libdeflate 1.0; the two functions used here are declared below as its libdeflate.h declares them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

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

/* take(a, b) -> bytes: the member's bytes [a:b], in its own bytes object (moved to its front and shrunk), which
   leaves here: part and take fail after it. */
static PyObject *inflated_take(Inflated *self, PyObject *args) {
    Py_ssize_t a, b;
    if (inflated_bounds(self, args, &a, &b) < 0) return NULL;
    PyObject *data = self->data;
    self->data = NULL;
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

/* ---- A record's usual WARC and HTTP headers, read in C as headers.parse_header's usual path reads them ----

   Why: turning an inflated member into a page was about 8% of a crawl-like run in Python (regex searches,
   copies of the header bytes, a dict built line by line). fields() reads only the usual record, where every
   step below is that path's exactly; anything else (another status line, a header not all ASCII, folded lines,
   no blank line, a Content-Length that is not plain digits, a member holding more than the record, ...) gives
   None, and fastwarc_reader._read_record, the definition, reads the record. */

static const char *const warc_names[] = {"warc-type", "content-length", "warc-target-uri", "warc-truncated",
                                         "warc-record-id", "warc-date"};  /* headers.WARC_WANTED's, in order */
static const char *const http_names[] = {"content-type", "transfer-encoding", "content-encoding"};  /* HTTP_WANTED */
enum { W_TYPE, W_LENGTH, W_URI, NAMES_MAX = 6 };
static PyObject *warc_keys[6], *http_keys[3];

/* What str.rstrip() and str.strip() take off an ASCII string; and what bytes.strip() does. */
static int str_space(unsigned char c) { return (c >= 9 && c <= 13) || (c >= 28 && c <= 32); }
static int bytes_space(unsigned char c) { return (c >= 9 && c <= 13) || c == 32; }

typedef struct {
    Py_ssize_t at[NAMES_MAX], len[NAMES_MAX];  /* each wanted header's first value (stripped); at -1: none */
    int order[NAMES_MAX], count, dups;  /* the names in the order met; further WARC-Target-URI headers */
} Found;

/* The header lines after a status line ending at p[pos - 1] ('\n'), up to p[end], as parse_header's usual path:
   the header's length (to the end of its first blank line), the wanted values in ``found``; -1 where that path
   is not taken or a line is over ``max_line`` (then Python reads it). */
static Py_ssize_t usual_header(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end, const char *const *names,
                               int n, Py_ssize_t max_line, Found *found) {
    found->count = found->dups = 0;
    for (int k = 0; k < n; k++) found->at[k] = -1;
    for (Py_ssize_t line = pos;;) { /* each line, to the first blank one: _BLANK_LINE.search(data, pos - 1, end) */
        const unsigned char *nl = line < end ? memchr(p + line, '\n', (size_t)(end - line)) : NULL;
        if (nl == NULL) return -1; /* no blank line */
        Py_ssize_t stop = nl - p, k = line, colon = -1;
        if (stop - line + 1 > max_line) return -1;
        while (k < stop && str_space(p[k])) k++;
        if (k == stop) return stop + 1; /* the blank line: the header ends with it */
        if (p[line] == ' ' || p[line] == '\t') return -1; /* a folded line (or the text starts with one) */
        for (k = line; k + 8 <= stop; k += 8) { /* ASCII */
            uint64_t word;
            memcpy(&word, p + k, 8);
            if (word & 0x8080808080808080ULL) return -1;
        }
        for (; k < stop; k++)
            if (p[k] >= 0x80) return -1;
        if ((nl = memchr(p + line, ':', (size_t)(stop - line))) != NULL) colon = nl - p;
        /* WANTED.findall: a wanted name (any case), [ \t]*, ':' (the line's first), the rest of the line */
        Py_ssize_t size = colon, a = colon + 1, b = stop;
        while (size > line && (p[size - 1] == ' ' || p[size - 1] == '\t')) size--;
        size -= line;
        for (k = 0; colon >= 0 && k < n; k++) {
            if ((Py_ssize_t)strlen(names[k]) != size || PyOS_strnicmp((const char *)p + line, names[k], size) != 0)
                continue;
            while (a < b && str_space(p[a])) a++;
            while (b > a && str_space(p[b - 1])) b--;
            if (found->at[k] < 0) {
                found->at[k] = a, found->len[k] = b - a;
                found->order[found->count++] = (int)k;
            } else found->dups += names == warc_names && k == W_URI;
            break;
        }
        line = stop + 1;
    }
}

/* The dict of the wanted headers met, in the order met (as parse_header's ``first``). */
static PyObject *found_dict(const unsigned char *p, const Found *found, PyObject **keys) {
    PyObject *dict = PyDict_New();
    for (int k = 0; dict != NULL && k < found->count; k++) {
        int name = found->order[k];
        PyObject *value = PyUnicode_DecodeASCII((const char *)p + found->at[name], found->len[name], NULL);
        if (value == NULL || PyDict_SetItem(dict, keys[name], value) < 0) Py_CLEAR(dict);
        Py_XDECREF(value);
    }
    return dict;
}

/* headers.Fields.target_uri's fix of the one WARC-Target-URI, written into ``dict``: its value without the
   <> around it (``uri``: already without them if ``cut``), spaces as %20. */
static int fix_uri(PyObject *dict, const unsigned char *uri, Py_ssize_t len, int cut) {
    Py_ssize_t spaces = 0;
    for (Py_ssize_t k = 0; k < len; k++) spaces += uri[k] == ' ';
    if (!cut && spaces == 0) return 0;
    PyObject *fixed = PyUnicode_New(len + 2 * spaces, 127);
    if (fixed == NULL) return -1;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(fixed);
    for (Py_ssize_t k = 0; k < len; k++) {
        if (uri[k] != ' ') *out++ = uri[k];
        else *out++ = '%', *out++ = '2', *out++ = '0';
    }
    int result = PyDict_SetItem(dict, warc_keys[W_URI], fixed);
    Py_DECREF(fixed);
    return result;
}

/* pages.is_html of a Content-Type (ASCII, stripped): its type before any ';', stripped, in lower case, is HTML's. */
static int is_html(const unsigned char *type, Py_ssize_t len) {
    const unsigned char *semi = memchr(type, ';', (size_t)len);
    Py_ssize_t a = 0, b = semi == NULL ? len : semi - type;
    while (a < b && str_space(type[a])) a++;
    while (b > a && str_space(type[b - 1])) b--;
    return (b - a == 9 && PyOS_strnicmp((const char *)type + a, "text/html", 9) == 0) ||
           (b - a == 21 && PyOS_strnicmp((const char *)type + a, "application/xhtml+xml", 21) == 0);
}

/* What fastwarc_reader._read_record reads of the record that is the member's bytes p[0:size], where it is the
   usual record: (hdr_len: its WARC header's length; length: its Content-Length, up to max_record; warc: the WARC
   headers record_page asks for, by lower-cased name, its target URI fixed as Fields.target_uri writes it back;
   uris: how many WARC-Target-URI headers; http_len, http: an http(s) response's HTTP header length and headers
   (else 0, None); html: whether its Content-Type is HTML's). None for any other record. */
static PyObject *record_fields(const unsigned char *p, Py_ssize_t size, Py_ssize_t max_record) {
    Found warc, http;
    Py_ssize_t length = 0, hdr_len = -1, http_len = -1;
    if (size >= 10 && (memcmp(p, "WARC/1.0\r\n", 10) == 0 || memcmp(p, "WARC/1.1\r\n", 10) == 0))
        hdr_len = usual_header(p, 10, size, warc_names, 6, PY_SSIZE_T_MAX, &warc);
    if (hdr_len < 0 || warc.at[W_LENGTH] < 0 || warc.len[W_LENGTH] == 0 || warc.len[W_LENGTH] > 18) Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < warc.len[W_LENGTH]; k++) {
        unsigned char c = p[warc.at[W_LENGTH] + k];
        if (c < '0' || c > '9') Py_RETURN_NONE; /* (int() reads more: Python does) */
        length = length * 10 + (c - '0');
    }
    const unsigned char *type = p + warc.at[W_TYPE], *uri = p + warc.at[W_URI];
    Py_ssize_t type_len = warc.at[W_TYPE] < 0 ? -1 : warc.len[W_TYPE], uri_len = warc.len[W_URI];
    if (length > max_record || size - hdr_len < length) Py_RETURN_NONE;
    if (warc.at[W_URI] < 0 && length > 0 && ((type_len == 8 && memcmp(type, "response", 8) == 0) ||
        (type_len == 7 && (memcmp(type, "request", 7) == 0 || memcmp(type, "revisit", 7) == 0))))
        Py_RETURN_NONE; /* (an HTTP record without a URI: warcio fails on it) */
    for (Py_ssize_t k = hdr_len + length; k < size; k++)
        if (!bytes_space(p[k])) Py_RETURN_NONE; /* the member holds more than the record */
    if (warc.at[W_URI] >= 0 && uri_len >= 2 && uri[0] == '<' && uri[uri_len - 1] == '>') uri++, uri_len -= 2;
    if (type_len == 8 && memcmp(type, "response", 8) == 0 && length > 0 && warc.at[W_URI] >= 0 &&
        ((uri_len >= 5 && memcmp(uri, "http:", 5) == 0) || (uri_len >= 6 && memcmp(uri, "https:", 6) == 0))) {
        const unsigned char *h = p + hdr_len; /* the HTTP header, from the block's first 8 KiB */
        Py_ssize_t end = length < 8192 ? length : 8192;
        const unsigned char *nl = memchr(h, '\n', (size_t)end);
        if (nl == NULL || nl - h + 1 > 4096) Py_RETURN_NONE; /* (fastwarc_reader.MAX_LINE) */
        int blank = 1;
        for (const unsigned char *c = h; c < nl; c++) {
            if (*c >= 0x80) Py_RETURN_NONE;
            blank &= str_space(*c);
        }
        if (blank || (http_len = usual_header(h, nl - h + 1, end, http_names, 3, 4096, &http)) < 0) Py_RETURN_NONE;
    }
    PyObject *warc_dict = found_dict(p, &warc, warc_keys), *http_dict = Py_None;
    if (warc_dict == NULL) return NULL;
    if (warc.at[W_URI] >= 0 && warc.dups == 0 && fix_uri(warc_dict, uri, uri_len, uri_len < warc.len[W_URI]) < 0) {
        Py_DECREF(warc_dict);
        return NULL;
    }
    if (http_len < 0) Py_INCREF(Py_None);
    else if ((http_dict = found_dict(p + hdr_len, &http, http_keys)) == NULL) {
        Py_DECREF(warc_dict);
        return NULL;
    }
    return Py_BuildValue("(nnNnnNN)", hdr_len, length, warc_dict, warc.dups + (warc.at[W_URI] >= 0),
                         http_len < 0 ? 0 : http_len, http_dict,
                         PyBool_FromLong(http_len >= 0 && http.at[0] >= 0 && is_html(p + hdr_len + http.at[0],
                                                                                       http.len[0])));
}

/* fields(max_record) -> (hdr_len, length, warc, uris, http_len, http, html) or None: see record_fields. */
static PyObject *inflated_fields(Inflated *self, PyObject *arg) {
    Py_ssize_t max_record = PyLong_AsSsize_t(arg);
    if (max_record == -1 && PyErr_Occurred()) return NULL;
    if (self->data == NULL) {
        PyErr_SetString(PyExc_ValueError, "the member was taken");
        return NULL;
    }
    return record_fields((const unsigned char *)PyBytes_AS_STRING(self->data), PyBytes_GET_SIZE(self->data),
                         max_record);
}

static PyMethodDef inflated_methods[] = {
    {"part", (PyCFunction)inflated_part, METH_VARARGS, "part(a, b) -> bytes: a copy of the bytes [a:b]."},
    {"take", (PyCFunction)inflated_take, METH_VARARGS,
     "take(a, b) -> bytes: the bytes [a:b], without a copy; the member is empty after it."},
    {"fields", (PyCFunction)inflated_fields, METH_O,
     "fields(max_record) -> (hdr_len, length, warc, uris, http_len, http, html) or None: the usual headers."},
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

/* The member at data[lo] inflated into exactly ``size`` bytes: a new bytes object and the bytes it took from
   data[lo:hi] (into *used), or NULL with no error set if it is not a whole valid member of that size. */
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
        return NULL;
    }
    *used_ret = (Py_ssize_t)used;
    return out;
}

/* kept(data, lo, hi, size) -> (Inflated, used) or None: as member(), the member held in an Inflated. */
static PyObject *kept(PyObject *self, PyObject *args) {
    Py_ssize_t used = 0;
    PyObject *out = inflate_member(args, &used);
    if (out == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    Inflated *held = PyObject_New(Inflated, &InflatedType);
    if (held == NULL) {
        Py_DECREF(out);
        return NULL;
    }
    held->data = out;
    return Py_BuildValue("(Nn)", (PyObject *)held, used);
}

static PyMethodDef methods[] = {
    {"open", open_library, METH_VARARGS, "open(path): take libdeflate's gzip decompressor from that shared object."},
    {"member", member, METH_VARARGS, "member(data, lo, hi, size) -> (bytes, used) or None: the gzip member at "
     "data[lo], inflated whole into exactly size bytes, and the bytes it took."},
    {"kept", kept, METH_VARARGS, "kept(data, lo, hi, size) -> (Inflated, used) or None: as member(), the member "
     "held in an Inflated, whose body take() hands over without a copy."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_inflate",
                                    "A gzip member inflated whole by libdeflate, opened at run time.", -1, methods};

PyMODINIT_FUNC PyInit__inflate(void) {
    if (PyType_Ready(&InflatedType) < 0) return NULL;
    for (int k = 0; k < NAMES_MAX; k++)
        if ((warc_keys[k] = PyUnicode_InternFromString(warc_names[k])) == NULL ||
            (k < 3 && (http_keys[k] = PyUnicode_InternFromString(http_names[k])) == NULL)) return NULL;
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
