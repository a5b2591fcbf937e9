/* The byte searches of quadfleet.worker.html._scan beside its scan (the module and the scan are in _scan.c): the
 * needles and token sets an attribute value is matched against, which the scan calls for the values that may be
 * evidence; UTF-8 validation (utf8_valid); and the FastWARC reader's search for gzip member headers
 * (gzip_member_at). Kept apart from _scan.c because none of them reads tags: each looks through a run of bytes
 * given to it. The module comment in _scan.c says why the scan is in C; each function here says why it is.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include "_scan.h"

/* Case-insensitive substring search for a few fixed lower-case literals (Horspool): the byte under the pattern's
   last position says how far it may move, mostly the pattern's whole length, so a class value is looked at about
   one byte in seven for "include" (a byte-by-byte search cost about 12 instructions a byte). */
typedef struct {
    const char *lit;
    Py_ssize_t m;
    unsigned char shift[256];
} Needle;

static Needle NEEDLES[N_COUNT] = {  /* (in the order of _scan.h's N_ names) */
    {"include", 7, {0}}, {"license", 7, {0}}, {"describedby", 11, {0}}, {"role", 4, {0}},
    {"ld+json", 7, {0}}, {"content-language", 16, {0}},
};

void qf_scan_fill_needles(void) {
    for (int k = 0; k < N_COUNT; k++) {
        Needle *nd = &NEEDLES[k];
        memset(nd->shift, (int)nd->m, 256);
        for (Py_ssize_t j = 0; j + 1 < nd->m; j++) {
            unsigned char c = (unsigned char)nd->lit[j];
            nd->shift[c] = (unsigned char)(nd->m - 1 - j);
            if (c >= 'a' && c <= 'z') nd->shift[c - 32] = (unsigned char)(nd->m - 1 - j);
        }
    }
}

int qf_scan_contains_ci(const unsigned char *s, Py_ssize_t n, int which) {
    const Needle *nd = &NEEDLES[which];
    Py_ssize_t m = nd->m;
    const unsigned char *lit = (const unsigned char *)nd->lit;
    for (Py_ssize_t i = 0; i + m <= n; i += nd->shift[s[i + m - 1]]) {
        if (lc(s[i + m - 1]) != lit[m - 1]) continue;
        Py_ssize_t k = 0;
        while (k < m - 1 && lc(s[i + k]) == lit[k]) k++;
        if (k == m - 1) return 1;
    }
    return 0;
}

void qf_scan_fill_filters(Tokens *ts) {
    memset(ts->by_len, 0, sizeof ts->by_len);
    memset(ts->first, 0, sizeof ts->first);
    memset(ts->last, 0, sizeof ts->last);
    for (Py_ssize_t t = 0; t < ts->n; t++) {
        const unsigned char *s = (const unsigned char *)ts->tok[t];
        ts->by_len[ts->len[t]] |= 1ULL << t;
        ts->first[s[0] & 31] |= 1ULL << t;
        ts->last[s[ts->len[t] - 1] & 31] |= 1ULL << t;
    }
}

/* Where a token that starts before end ends: at the first T_TOKSTOP byte from p, or end. Eight bytes at a time
   where the page has them (limit: its end; a class value is mostly followed by more of it): a class token is
   about ten bytes long, and a byte at a time cost some seven instructions a byte. stop_bytes marks, exactly,
   each byte <= 0x20, >= 0x80 or '&', a superset of T_TOKSTOP (bytes 0-8 and 14-27 are a token's), so each mark
   is confirmed in the table. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR 1
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t stop_bytes(uint64_t w) {
    uint64_t low = w & ~HIGHS;
    uint64_t below21 = ~((low + (0x80 - 0x21) * ONES) | w) & HIGHS;  /* (low + 0x5f: no carry between bytes) */
    uint64_t y = w ^ ('&' * ONES);
    uint64_t amp = ~(((y & ~HIGHS) + ~HIGHS) | y) & HIGHS;  /* the bytes of y that are 0 */
    return below21 | amp | (w & HIGHS);
}
#endif

static inline const unsigned char *token_end(const unsigned char *p, const unsigned char *end,
                                             const unsigned char *limit) {
#ifdef SWAR
    while (p < end && limit - p >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        for (uint64_t m = stop_bytes(w); m; m &= m - 1) {
            const unsigned char *q = p + (__builtin_ctzll(m) >> 3);
            if (q >= end) return end;
            if (qf_scan_T[*q] & T_TOKSTOP) return q;
        }
        p += 8;
    }
#else
    (void)limit;
#endif
    while (p < end && !(qf_scan_T[*p] & T_TOKSTOP)) p++;
    return p < end ? p : end;
}

/* Bit mask of the tokens (lower-case ASCII) that occur as whole tokens of the value v (n bytes, followed by the
   page up to limit); ~0 (all bits: no token set has 64) where the value holds '&' (a character reference: its
   tokens are decided on the unescaped text, in Python). */
unsigned long long qf_scan_match_tokens(const unsigned char *v, Py_ssize_t n, const Tokens *ts,
                                        const unsigned char *limit) {
    unsigned long long mask = 0;
    const unsigned char *p = v, *end = v + n;
    while (p < end) {
        while (p < end && (qf_scan_T[*p] & T_BOUND)) p++;
        if (p >= end) break;
        const unsigned char *start = p;
        p = token_end(p, end, limit);
        if (p < end && *p == '&') return ~0ULL;
        Py_ssize_t tl = p - start;  /* >= 1: start is no bound, and an '&' there returned */
        if (tl > 63) continue;
        unsigned long long c = ts->by_len[tl] & ts->first[start[0] & 31] & ts->last[p[-1] & 31];
        for (int t = 0; c; t++, c >>= 1) {
            if (!(c & 1)) continue;
            const char *tok = ts->tok[t];
            Py_ssize_t k = 0;
            while (k < tl && lc(start[k]) == (unsigned char)tok[k]) k++;
            if (k == tl) mask |= 1ULL << t;
        }
    }
    return mask;
}

int qf_scan_tokens(PyObject *seq, const char **tok, Py_ssize_t *len, Py_ssize_t *n) {
    PyObject *fast = PySequence_Fast(seq, "tokens must be a sequence of bytes");
    if (!fast) return -1;
    Py_ssize_t k = PySequence_Fast_GET_SIZE(fast);
    if (k > MAX_TOKENS) { Py_DECREF(fast); PyErr_SetString(PyExc_ValueError, "too many tokens"); return -1; }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *b = PySequence_Fast_GET_ITEM(fast, i);
        char *s;
        if (PyBytes_AsStringAndSize(b, &s, &len[i]) < 0) { Py_DECREF(fast); return -1; }
        if (len[i] < 1 || len[i] > 63) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "tokens must be 1 to 63 bytes long");
            return -1;
        }
        tok[i] = s;  /* the caller keeps the tuple alive for the call */
    }
    *n = k;
    Py_DECREF(fast);
    return 0;
}

/* Whether the bytes are valid UTF-8 exactly as CPython's strict decoder takes it (no overlong forms, no
   surrogates, nothing past U+10FFFF, no cut sequence): lets a page go to the parser as it is without decoding it
   first just to learn that. Pages are mostly ASCII (the mix: 0.3% of its bytes are not), so ASCII runs are
   skipped a block at a time: 128 bytes with AVX2 where the CPU has it (four loads OR-ed, one movemask: about
   0.1 instructions a byte), else 64 with SSE2, else 32 in words (0.7 instructions a byte before). Within a 16-byte
   block the first byte >= 0x80 is found from the mask, where one sequence is checked; a run of them (text in
   another script) is checked without going back to the block loop. */
#if defined(__SSE2__) && defined(__GNUC__) && defined(__x86_64__)
#define UTF8_AVX2 1
#include <immintrin.h>
__attribute__((target("avx2"))) static const unsigned char *ascii_avx2(const unsigned char *p,
                                                                      const unsigned char *end) {
    while (end - p >= 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)p), b = _mm256_loadu_si256((const __m256i *)(p + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(p + 64)), d = _mm256_loadu_si256((const __m256i *)(p + 96));
        if (_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d)))) break;
        p += 128;
    }
    return p;
}
static int has_avx2 = -1;
#endif

/* The length of the valid sequence at p (p < end, *p >= 0x80), 0 if it is not one. */
static inline Py_ssize_t utf8_seq(const unsigned char *p, const unsigned char *end) {
    unsigned char c = *p, lo = 0x80, hi = 0xBF;
    Py_ssize_t need;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) { need = 2; if (c == 0xE0) lo = 0xA0; else if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 3; if (c == 0xF0) lo = 0x90; else if (c == 0xF4) hi = 0x8F; }
    else return 0;
    if (end - p <= need || p[1] < lo || p[1] > hi) return 0;
    for (Py_ssize_t k = 2; k <= need; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 0;
    return need + 1;
}

static int utf8_ok(const unsigned char *p, const unsigned char *end) {
#ifdef UTF8_AVX2
    if (has_avx2 < 0) has_avx2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    int avx2 = has_avx2;
#endif
    while (p < end) {
#ifdef UTF8_AVX2
        if (avx2) p = ascii_avx2(p, end);
#endif
#if defined(__SSE2__)
        while (end - p >= 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(p + 32)), d = _mm_loadu_si128((const __m128i *)(p + 48));
            if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)))) break;
            p += 64;
        }
        if (end - p >= 16) {
            int m = _mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
            if (!m) { p += 16; continue; }
            p += __builtin_ctz((unsigned)m);
        }
#else
        while (end - p >= 32) {
            uint64_t w[4];
            memcpy(w, p, 32);
            if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
            p += 32;
        }
        if (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (!(w & 0x8080808080808080ULL)) { p += 8; continue; }
        }
#endif
        if (*p < 0x80) { p++; continue; }  /* (the tail, or the bytes before a word's first byte >= 0x80) */
        do {  /* a run of sequences, back to the blocks at its first ASCII byte */
            Py_ssize_t k = utf8_seq(p, end);
            if (!k) return 0;
            p += k;
        } while (p < end && *p >= 0x80);
    }
    return 1;
}

PyObject *qf_scan_utf8_valid(PyObject *self, PyObject *arg) {
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = buf.buf;
    int ok = utf8_ok(p, p + buf.len);
    PyBuffer_Release(&buf);
    return PyBool_FromLong(ok);
}

/* gzip_member_at(data, lo, hi) -> int: the first offset i, lo <= i <= hi - 2, where the bytes 1f 8b 08 (a gzip
 * member header) start, or -1: Python's bytes.find(b"\x1f\x8b", lo, hi) followed by a check of the third byte,
 * as gzip_member_at_py does (worker/archive/gzip_members.py), but memchr-driven: the FastWARC reader's check
 * reads every compressed byte of a gzip WARC, and bytes.find of two bytes took 2% of a whole run on the crawl
 * mix. lo and hi are clamped to the data as slicing clamps them; the third byte may lie at hi or beyond (and a
 * header whose third byte is past the data's end is not one). */
PyObject *qf_scan_gzip_member_at(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t lo, hi, found = -1;
    if (!PyArg_ParseTuple(args, "y*nn", &buf, &lo, &hi)) return NULL;
    Py_ssize_t n = buf.len;
    if (lo < 0) { lo += n; if (lo < 0) lo = 0; }
    if (hi < 0) { hi += n; if (hi < 0) hi = 0; }
    if (hi > n) hi = n;
    const unsigned char *d = buf.buf;
    Py_ssize_t at = lo;
    while (at + 2 <= hi) {
        const unsigned char *q = memchr(d + at, 0x1f, (size_t)(hi - 1 - at));
        if (q == NULL) break;
        at = q - d;
        if (d[at + 1] == 0x8b && at + 2 < n && d[at + 2] == 0x08) { found = at; break; }
        at++;
    }
    PyBuffer_Release(&buf);
    return PyLong_FromSsize_t(found);
}
