/* What the three source files of quadfleet.worker.html._scan share: _scan.c (the prefilter's scan and the module),
 * _scan_bytes.c (the byte searches beside it: the needles and token sets a value is matched against, UTF-8
 * validation, the gzip member search) and _rawtext.c (raw_ranges, the walk that leaves out raw text). */
#ifndef QF_SCAN_H
#define QF_SCAN_H
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Everything below is hidden in the module's shared object (the module exports PyInit__scan alone): so that a call
 * from one file to another is a direct call and the shared table a direct load, as within one file, rather than
 * through the PLT and GOT (-fPIC's default for a name another object could interpose). */
#pragma GCC visibility push(hidden)

/* The byte tests of the scan as a table (filled at import by _scan.c, which reads it over every byte of every
   tag; _scan_bytes.c ends a class or rel token with T_BOUND and T_TOKSTOP). */
enum {
    T_SEP = 1,        /* between attributes: is_sp, '/', >= 0x80 */
    T_NAMESTOP = 2,   /* ends an attribute name */
    T_BOUND = 4,      /* bounds a class/rel token */
    T_NAME = 8,       /* continues a tag name */
    T_VALSTOP = 16,   /* ends an unquoted value */
    T_JUNK = 32,      /* a T_SEP byte that HTML5 reads as (part of) a name: neither white space nor '/' */
    T_WS = 64,        /* is_ws */
    T_TOKSTOP = 128,  /* ends a token's bytes: T_BOUND or '&' (a character reference: the value is odd) */
    T_H5STOP = 256,   /* ends a tag name as HTML5 reads it: is_ws, '/', '>' */
    T_H5ODD = 512,    /* after the name's letters, makes the two readings of a tag differ */
};
extern unsigned short qf_scan_T[256];

/* ASCII letters and their lower case: the scan, the token and needle matches and the raw-text walk all compare
   names and values ASCII-case-insensitively. Inline (one or two compares), as every file reads them per byte. */
static inline int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static inline unsigned char lc(unsigned char c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* Whether a tag or attribute name equals a lower-case literal of letters and '-' (its length m known at compile
   time: NAME_IS), ASCII-case-insensitively. Compared a word at a time with every byte OR 0x20, which maps a
   letter to its lower case and is exact here: a name holds no byte <= 0x20 (they end it), and among bytes
   0x21-0x7f only an upper-case letter becomes a lower-case one, and none becomes '-'. (Overlapping loads of
   the name's own bytes: nothing is read beyond it.) Here because the scan (_scan.c) and the raw-text walk
   (_rawtext.c) both name tags with it, inline so that each compare stays a few instructions. */
static inline uint64_t load_bytes(const void *s, int k) {  /* k: 2, 4 or 8, a constant */
    if (k == 8) { uint64_t w; memcpy(&w, s, 8); return w; }
    if (k == 4) { uint32_t w; memcpy(&w, s, 4); return w; }
    uint16_t w; memcpy(&w, s, 2); return w;
}
static inline int name_is(const unsigned char *s, Py_ssize_t n, const char *lit, Py_ssize_t m) {
    if (n != m) return 0;
    int k = m >= 8 ? 8 : m >= 4 ? 4 : 2;  /* m <= 16: two loads of k bytes cover it */
    uint64_t lower = 0x2020202020202020ULL >> (64 - 8 * k);
    return !(((load_bytes(s, k) | lower) ^ load_bytes(lit, k))
             | ((load_bytes(s + m - k, k) | lower) ^ load_bytes(lit + m - k, k)));
}
#define NAME_IS(s, n, lit) name_is((s), (n), lit, (Py_ssize_t)sizeof(lit) - 1)

#define MAX_TOKENS 62

/* A set of tokens looked for in class or rel values, with three filters filled once per scan so that a token of
   the value is mostly passed over after three table look-ups: by_len[l], the tokens l bytes long; first[c & 31]
   and last[c & 31], the tokens whose first (last) byte lower-cased is c, keyed by the low five bits, which an
   ASCII letter shares with its upper case (a collision only lets a candidate through to the full compare).
   Here because the scan's state holds two (class and rel) and _scan_bytes.c reads, fills and matches them. */
typedef struct {
    Py_ssize_t n;
    const char *tok[MAX_TOKENS];
    Py_ssize_t len[MAX_TOKENS];
    unsigned long long by_len[64], first[32], last[32];
} Tokens;

/* The token set's part, in _scan_bytes.c, that scan() calls: the tokens of a Python sequence of bytes (0, or -1
   with an error set; the caller keeps the sequence alive for the call), and its filters, filled once per scan. */
int qf_scan_tokens(PyObject *seq, const char **tok, Py_ssize_t *len, Py_ssize_t *n);
void qf_scan_fill_filters(Tokens *ts);

/* Bit mask of the tokens of ts that occur as whole tokens of the value v (n bytes, followed by the page up to
   limit), ~0 where the value holds '&': in _scan_bytes.c, called by the scan for class and rel values. */
unsigned long long qf_scan_match_tokens(const unsigned char *v, Py_ssize_t n, const Tokens *ts,
                                        const unsigned char *limit);

/* The fixed lower-case literals the scan looks for within values, case-insensitively (the needles are made, and
   searched for, in _scan_bytes.c: qf_scan_fill_needles once at import, then qf_scan_contains_ci(s, n, N_...)). */
enum { N_INCLUDE, N_LICENSE, N_DESCRIBEDBY, N_ROLE, N_LDJSON, N_CONTENT_LANGUAGE, N_COUNT };
void qf_scan_fill_needles(void);
int qf_scan_contains_ci(const unsigned char *s, Py_ssize_t n, int which);

/* The module's other functions, for the method table in _scan.c: utf8_valid and gzip_member_at (_scan_bytes.c),
   raw_ranges (_rawtext.c). */
PyObject *qf_scan_utf8_valid(PyObject *self, PyObject *arg);
PyObject *qf_scan_gzip_member_at(PyObject *self, PyObject *args);
PyObject *qf_scan_raw_ranges(PyObject *self, PyObject *args);

#pragma GCC visibility pop

#endif
