/* What the two source files of quadfleet.worker.archive._inflate share: _inflate_fields.c reads the usual record's
   headers, _inflate.c (the module) inflates members and hands them to it. */
#ifndef QUADFLEET_INFLATE_H
#define QUADFLEET_INFLATE_H
#include <Python.h>

/* (hdr_len, length, warc, uris, http_len, http, html) of the usual record that is p[0:size], its dicts made by
   calling ``mapping`` (NULL: dicts); None for any other record; NULL with an error set. */
PyObject *record_fields(const unsigned char *p, Py_ssize_t size, Py_ssize_t max_record, PyObject *mapping);
int fields_init(void);

#endif
