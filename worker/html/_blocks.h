/* What _blocks.c's module takes from _blocks_walk.c (the two source files of quadfleet.worker.html._blocks). */
#ifndef QF_BLOCKS_H
#define QF_BLOCKS_H
#include <Python.h>

/* schema_org_walk(data, base, prefix, tables) -> the triples of a plain schema.org block, or None. */
PyObject *qf_schema_org_walk(PyObject *self, PyObject *args);
/* Made once, before the module: 0, or -1 with an error set. */
int qf_schema_org_walk_init(void);

#endif
