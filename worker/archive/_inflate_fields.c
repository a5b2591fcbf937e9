/* A record's usual WARC and HTTP headers read in C: the second source file of quadfleet.worker.archive._inflate,
   whose module (in _inflate.c) exposes them as Inflated.fields and in record(). Kept apart as its own job: the
   inflate finds and inflates a member, this reads the record in it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include "_inflate.h"

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

/* The dict of the wanted headers met, in the order met (as parse_header's ``first``): a ``mapping`` (a dict type,
   headers.LowerFields: made here, not copied in Python), or a dict if NULL. */
static PyObject *found_dict(const unsigned char *p, const Found *found, PyObject **keys, PyObject *mapping) {
    PyObject *dict = mapping == NULL ? PyDict_New() : PyObject_CallNoArgs(mapping);
    if (dict != NULL && !PyDict_Check(dict)) {
        PyErr_SetString(PyExc_TypeError, "fields(): the mapping type is not a dict type");
        Py_CLEAR(dict);
    }
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
PyObject *record_fields(const unsigned char *p, Py_ssize_t size, Py_ssize_t max_record, PyObject *mapping) {
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
    PyObject *warc_dict = found_dict(p, &warc, warc_keys, mapping), *http_dict = Py_None;
    if (warc_dict == NULL) return NULL;
    if (warc.at[W_URI] >= 0 && warc.dups == 0 && fix_uri(warc_dict, uri, uri_len, uri_len < warc.len[W_URI]) < 0) {
        Py_DECREF(warc_dict);
        return NULL;
    }
    if (http_len < 0) Py_INCREF(Py_None);
    else if ((http_dict = found_dict(p + hdr_len, &http, http_keys, mapping)) == NULL) {
        Py_DECREF(warc_dict);
        return NULL;
    }
    return Py_BuildValue("(nnNnnNN)", hdr_len, length, warc_dict, warc.dups + (warc.at[W_URI] >= 0),
                         http_len < 0 ? 0 : http_len, http_dict,
                         PyBool_FromLong(http_len >= 0 && http.at[0] >= 0 && is_html(p + hdr_len + http.at[0],
                                                                                       http.len[0])));
}

/* The keys of the dicts record_fields makes (interned once, when the module is made); -1 on failure. */
int fields_init(void) {
    for (int k = 0; k < NAMES_MAX; k++)
        if ((warc_keys[k] = PyUnicode_InternFromString(warc_names[k])) == NULL ||
            (k < 3 && (http_keys[k] = PyUnicode_InternFromString(http_names[k])) == NULL)) return -1;
    return 0;
}
