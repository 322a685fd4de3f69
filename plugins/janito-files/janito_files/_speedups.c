/* The two per-file steps of a search that Python makes slow, compiled.
 *
 * Each function here is the compiled twin of a function of janito_files._search, with the
 * same arguments and the same answers; tests/test_speedups.py holds each pair together:
 *
 *   literal_lines(hay, data, needle, limit)        literal_lines_py
 *   read_searchable_at(dir_fd, name, sniff, most)  read_searchable_at_py
 *   list_folder(fd)                                janito_core._fswalk.list_folder
 *   pick_plain(names, kinds, kind, how, start, end) pick_plain_py
 *   prefixed(prefix, names)                        prefixed_py
 *
 * literal_lines only reads its two buffers, and every offset it forms lies within them.
 * read_searchable_at opens one name of a folder the walk already holds open, with the
 * flags janito_core's open_regular_at uses: it never follows a link, never blocks on a
 * FIFO or device, and refuses a name holding a slash, so it cannot leave that folder.
 * list_folder reads the names of a folder the walk holds open, and opens nothing.
 *
 * Built against the limited API of Python 3.10, so one wheel serves 3.10 and later.
 */
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

/* Python 3.12's headers and later define Py_RETURN_NONE without a new reference, as None
 * is immortal there; a module built by them for the limited API of 3.10 would then take a
 * reference to None away on each return, on 3.10 and 3.11. */
#define RETURN_NONE do { Py_INCREF(Py_None); return Py_None; } while (0)
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

/* How common each byte is in source code and text (0: rarest), counted over a copy of
 * Python's standard library: find() looks for the needle's rarest byte, so memchr stops
 * seldom where the first byte (an "r" of "raise", a space) would stop at every turn. */
static const unsigned char BYTE_RANK[256] = {
      0,   1,   2,   3,   4,   5,   6,   7,   8,  76, 245,   9,  10,  57,  54,  55,
     11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,  51,  22,  23,  24,  25,
    255, 168, 231, 216, 161, 179, 164, 234, 239, 238, 193, 181, 235, 219, 241, 190,
    227, 220, 213, 202, 197, 196, 192, 186, 191, 194, 226, 173, 182, 229, 201, 167,
    171, 214, 188, 208, 198, 224, 199, 184, 185, 217, 163, 174, 210, 195, 212, 205,
    200, 165, 211, 209, 222, 189, 178, 180, 175, 172, 170, 203, 207, 204, 162, 240,
    166, 251, 228, 243, 242, 254, 244, 230, 232, 247, 183, 218, 246, 233, 249, 248,
    237, 206, 250, 253, 252, 236, 215, 221, 225, 223, 187, 177, 169, 176, 160,  26,
    159, 155, 154, 149, 128,  79,  62,  73, 122, 108, 110, 116, 137, 104,  66,  78,
     86, 100,  63, 105, 153,  89, 103,  96, 114, 151, 107,  83, 142, 147,  74, 125,
    124, 143,  81,  91, 152, 129, 123,  98, 145, 133,  97,  90, 115,  87, 127, 139,
    121,  94,  85, 120, 111, 130, 135,  93, 132, 106, 102,  82, 126, 141, 112, 134,
     77,  48, 144, 156, 119, 113,  64,  80,  67,  58,  71,  52,  75,  68,  99,  88,
    148, 131,  61,  70,  65,  50,  72,  53,  42,  59,  46,  28,  56,  36,  47,  45,
     69,  60, 157, 158, 101, 150, 138, 140, 146, 109,  92, 117, 136,  84,  35,  95,
    118,  43,  40,  49,  29,  32,  33,  37,  41,  34,  44,  38,  39,  31,  30,  27
};

/* needle[0:n]'s rarest byte (*rare) and, for a needle of two bytes or more, the rarest of
 * its other bytes that differs from it (*other; another offset of the same byte where none
 * differs), as offsets into it. */
static void
rare_bytes(const char *needle, Py_ssize_t n, Py_ssize_t *rare, Py_ssize_t *other)
{
    Py_ssize_t a = 0, b = -1;
    for (Py_ssize_t i = 1; i < n; i++) {
        if (BYTE_RANK[(unsigned char)needle[i]] < BYTE_RANK[(unsigned char)needle[a]])
            a = i;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i != a && needle[i] != needle[a]
            && (b < 0 || BYTE_RANK[(unsigned char)needle[i]] < BYTE_RANK[(unsigned char)needle[b]]))
            b = i;
    }
    *rare = a;
    *other = b >= 0 ? b : (a == 0 ? 1 : 0);
}

/* A rare byte of rank below this is looked for alone with memchr, which passes over text
 * without it quicker than anything; a commoner one ("d" of "def", "m" of "import") stops
 * memchr every few dozen bytes, and two bytes are compared at once instead. */
#define PAIR_RANK 200

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_PAIRS 1

/* Whether this CPU runs AVX2 (set once, when the module is imported). */
static int has_avx2;

/* The first start in [from, last] where needle[a] and needle[b] both stand at their
 * offsets and the whole needle follows, 16 starts compared at a time; -1 if none. Every
 * load lies within hay[0:size]: a block of starts is compared only while its last start is
 * at most `last` = size - n, and a, b < n. */
static Py_ssize_t
find_pair_sse2(const char *hay, Py_ssize_t from, Py_ssize_t last, const char *needle,
               Py_ssize_t n, Py_ssize_t a, Py_ssize_t b)
{
    const __m128i want_a = _mm_set1_epi8(needle[a]), want_b = _mm_set1_epi8(needle[b]);
    for (; from + 15 <= last; from += 16) {
        __m128i at_a = _mm_loadu_si128((const __m128i *)(hay + from + a));
        __m128i at_b = _mm_loadu_si128((const __m128i *)(hay + from + b));
        unsigned mask = (unsigned)_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(at_a, want_a), _mm_cmpeq_epi8(at_b, want_b)));
        while (mask) {
            Py_ssize_t start = from + __builtin_ctz(mask);
            if (memcmp(hay + start, needle, (size_t)n) == 0)
                return start;
            mask &= mask - 1;
        }
    }
    for (; from <= last; from++) {
        if (hay[from + a] == needle[a] && memcmp(hay + from, needle, (size_t)n) == 0)
            return from;
    }
    return -1;
}

/* find_pair_sse2, 32 starts at a time. */
__attribute__((target("avx2"))) static Py_ssize_t
find_pair_avx2(const char *hay, Py_ssize_t from, Py_ssize_t last, const char *needle,
               Py_ssize_t n, Py_ssize_t a, Py_ssize_t b)
{
    const __m256i want_a = _mm256_set1_epi8(needle[a]), want_b = _mm256_set1_epi8(needle[b]);
    for (; from + 31 <= last; from += 32) {
        __m256i at_a = _mm256_loadu_si256((const __m256i *)(hay + from + a));
        __m256i at_b = _mm256_loadu_si256((const __m256i *)(hay + from + b));
        unsigned mask = (unsigned)_mm256_movemask_epi8(
            _mm256_and_si256(_mm256_cmpeq_epi8(at_a, want_a), _mm256_cmpeq_epi8(at_b, want_b)));
        while (mask) {
            Py_ssize_t start = from + __builtin_ctz(mask);
            if (memcmp(hay + start, needle, (size_t)n) == 0)
                return start;
            mask &= mask - 1;
        }
    }
    return find_pair_sse2(hay, from, last, needle, n, a, b);
}
#endif

/* The first occurrence of needle[0:n] in hay[from:size], or -1. */
static Py_ssize_t
find(const char *hay, Py_ssize_t size, Py_ssize_t from, const char *needle, Py_ssize_t n)
{
    Py_ssize_t rare, other;
    rare_bytes(needle, n, &rare, &other);
    Py_ssize_t last = size - n; /* the last offset a match can start at */
#ifdef HAVE_PAIRS
    if (n >= 2 && BYTE_RANK[(unsigned char)needle[rare]] >= PAIR_RANK) {
        if (from > last)
            return -1;
        return has_avx2 ? find_pair_avx2(hay, from, last, needle, n, rare, other)
                        : find_pair_sse2(hay, from, last, needle, n, rare, other);
    }
#endif
    const char key = needle[rare];
    while (from <= last) {
        /* a match starting at `from` or later has its rare byte at from + rare or later */
        const char *p = memchr(hay + from + rare, key, (size_t)(last - from + 1));
        if (p == NULL)
            return -1;
        Py_ssize_t at = (p - hay) - rare;
        if (memcmp(hay + at, needle, (size_t)n) == 0)
            return at;
        from = at + 1;
    }
    return -1;
}

/* The offset just past the last line feed in data[0:before], or 0. */
static Py_ssize_t
line_start(const char *data, Py_ssize_t before)
{
    while (before > 0 && data[before - 1] != '\n')
        before--;
    return before;
}

static Py_ssize_t
count_line_feeds(const char *data, Py_ssize_t from, Py_ssize_t to)
{
    Py_ssize_t count = 0;
    const char *p = data + from, *end = data + to;
#ifdef HAVE_PAIRS
    /* 16 bytes at a time: each byte's counter takes one per line feed, and is summed before
     * it could pass 255 */
    const __m128i feed = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (end - p >= 16) {
        __m128i counters = zero;
        for (int rounds = 0; end - p >= 16 && rounds < 255; p += 16, rounds++)
            counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(
                _mm_loadu_si128((const __m128i *)p), feed));
        __m128i sums = _mm_sad_epu8(counters, zero);
        count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        count++;
        p++;
    }
    return count;
}

/* Appends data[start:end] to the growing buffer, after a line feed unless it is the first. */
static int
append_line(char **out, Py_ssize_t *used, Py_ssize_t *capacity, const char *data,
            Py_ssize_t start, Py_ssize_t end, int first)
{
    Py_ssize_t needed = *used + (end - start) + 1;
    if (needed > *capacity) {
        Py_ssize_t grown = needed + needed / 2 + 4096;
        char *bigger = PyMem_Realloc(*out, (size_t)grown);
        if (bigger == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        *out = bigger;
        *capacity = grown;
    }
    if (!first)
        (*out)[(*used)++] = '\n';
    memcpy(*out + *used, data + start, (size_t)(end - start));
    *used += end - start;
    return 0;
}

static PyObject *
literal_lines(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *hay_object, *data_object, *needle_object;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "SSSn:literal_lines", &hay_object, &data_object,
                          &needle_object, &limit))
        return NULL;
    char *hay, *data, *needle;
    Py_ssize_t size, data_size, n;
    if (PyBytes_AsStringAndSize(hay_object, &hay, &size) < 0
        || PyBytes_AsStringAndSize(data_object, &data, &data_size) < 0
        || PyBytes_AsStringAndSize(needle_object, &needle, &n) < 0)
        return NULL;
    if (size != data_size) {
        PyErr_SetString(PyExc_ValueError, "hay and data must have the same length");
        return NULL;
    }
    if (n == 0) {
        PyErr_SetString(PyExc_ValueError, "the needle is empty");
        return NULL;
    }

    PyObject *numbers = PyList_New(0);
    if (numbers == NULL)
        return NULL;
    char *out = NULL;
    Py_ssize_t used = 0, capacity = 0, line_no = 1, counted = 0;
    Py_ssize_t at = limit > 0 ? find(hay, size, 0, needle, n) : -1;
    while (at >= 0) {
        Py_ssize_t start = line_start(data, at);
        const char *feed = memchr(data + at, '\n', (size_t)(size - at));
        Py_ssize_t end = feed ? feed - data : size;
        line_no += count_line_feeds(data, counted, start);
        counted = start;
        PyObject *number = PyLong_FromSsize_t(line_no);
        if (number == NULL || PyList_Append(numbers, number) < 0) {
            Py_XDECREF(number);
            goto fail;
        }
        Py_DECREF(number);
        if (append_line(&out, &used, &capacity, data, start, end,
                        PyList_Size(numbers) == 1) < 0)
            goto fail;
        if (feed == NULL || --limit <= 0)
            break;
        at = find(hay, size, end + 1, needle, n);
    }
    PyObject *joined = PyBytes_FromStringAndSize(out ? out : "", used);
    PyMem_Free(out);
    if (joined == NULL) {
        Py_DECREF(numbers);
        return NULL;
    }
    PyObject *result = PyTuple_Pack(2, numbers, joined);
    Py_DECREF(numbers);
    Py_DECREF(joined);
    return result;

fail:
    PyMem_Free(out);
    Py_DECREF(numbers);
    return NULL;
}


static PyObject *
raise_errno(int code, const char *message, PyObject *name)
{
    PyObject *error = message
        ? PyObject_CallFunction(PyExc_OSError, "isO", code, message, name)
        : NULL;
    if (message == NULL) {
        errno = code;
        return PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
    }
    if (error != NULL) {
        PyErr_SetObject((PyObject *)Py_TYPE(error), error);
        Py_DECREF(error);
    }
    return NULL;
}

/* Reads fd to its end into a new bytes object of at most `most` bytes, starting with the
 * `have` bytes already in *buffer; NULL with errno set, or with *too_large set. */
static char *
read_rest(int fd, char *buffer, Py_ssize_t have, Py_ssize_t expected, Py_ssize_t most,
          Py_ssize_t *total, int *too_large)
{
    Py_ssize_t capacity = expected > have ? expected : have + 1;
    char *grown = realloc(buffer, (size_t)capacity);
    if (grown == NULL) {
        free(buffer);
        errno = ENOMEM;
        return NULL;
    }
    buffer = grown;
    for (;;) {
        if (have == capacity) {
            capacity = capacity + capacity / 2 + 65536;
            grown = realloc(buffer, (size_t)capacity);
            if (grown == NULL) {
                free(buffer);
                errno = ENOMEM;
                return NULL;
            }
            buffer = grown;
        }
        size_t wanted = (size_t)(capacity - have);
        ssize_t got = read(fd, buffer + have, wanted);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            free(buffer);
            return NULL;
        }
        have += got;
        if (have > most) { /* it grew past the limit while it was read */
            free(buffer);
            *too_large = 1;
            return NULL;
        }
        /* A read of a regular file returns less than asked only at its end. */
        if ((size_t)got < wanted)
            break;
    }
    *total = have;
    return buffer;
}

static PyObject *
read_searchable_at(PyObject *Py_UNUSED(module), PyObject *args)
{
    int dir_fd;
    PyObject *name, *encoded = NULL;
    Py_ssize_t sniff, most;
    if (!PyArg_ParseTuple(args, "iUnn:read_searchable_at", &dir_fd, &name, &sniff, &most))
        return NULL;
    if (sniff <= 0 || most < 0) {
        PyErr_SetString(PyExc_ValueError, "sniff must be positive and most not negative");
        return NULL;
    }
    encoded = PyUnicode_EncodeFSDefault(name);
    if (encoded == NULL)
        return NULL;
    char *path;
    Py_ssize_t path_size;
    if (PyBytes_AsStringAndSize(encoded, &path, &path_size) < 0) {
        Py_DECREF(encoded);
        return NULL;
    }
    if (path_size == 0 || memchr(path, '/', (size_t)path_size) != NULL
        || (size_t)path_size != strlen(path) || strcmp(path, ".") == 0
        || strcmp(path, "..") == 0) {
        Py_DECREF(encoded);
        PyErr_SetString(PyExc_ValueError, "name must be one non-empty path component");
        return NULL;
    }

    int fd, failed_errno = 0, too_large = 0, not_regular = 0, is_dir = 0;
    char *buffer = NULL;
    Py_ssize_t total = 0;
    Py_BEGIN_ALLOW_THREADS
    fd = openat(dir_fd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        failed_errno = errno;
    } else {
        struct stat info;
        if (fstat(fd, &info) < 0) {
            failed_errno = errno;
        } else if (S_ISDIR(info.st_mode)) {
            is_dir = 1;
        } else if (!S_ISREG(info.st_mode)) {
            not_regular = 1;
        } else if (info.st_size > most) {
            too_large = 1;
        } else {
            buffer = malloc((size_t)sniff);
            ssize_t got = -1;
            if (buffer != NULL) {
                do {
                    got = read(fd, buffer, (size_t)sniff);
                } while (got < 0 && errno == EINTR);
            } else {
                errno = ENOMEM;
            }
            if (got < 0) {
                failed_errno = errno;
                free(buffer);
                buffer = NULL;
            } else if (got == sniff && memchr(buffer, 0, (size_t)sniff) == NULL) {
                /* One byte more than st_size reads an unchanged file in one call. */
                buffer = read_rest(fd, buffer, got, (Py_ssize_t)info.st_size + 1, most,
                                   &total, &too_large);
                if (buffer == NULL && !too_large)
                    failed_errno = errno;
            } else {
                total = got;
            }
        }
        close(fd);
    }
    Py_END_ALLOW_THREADS

    PyObject *result = NULL;
    if (failed_errno) {
        raise_errno(failed_errno, NULL, name);
    } else if (is_dir) {
        raise_errno(EISDIR, "the path is a folder", name);
    } else if (not_regular) {
        raise_errno(EINVAL, "the path is not a regular file (a FIFO, socket or device)", name);
    } else if (too_large) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = PyBytes_FromStringAndSize(buffer ? buffer : "", total);
    }
    free(buffer);
    Py_DECREF(encoded);
    return result;
}

/* ---------------------------------------------------------------- scan_files */

/* What scan_files found in one file, kept without the GIL until the batch is done. */
typedef struct {
    char code;            /* see scan_files' docstring */
    int error;            /* 'e': errno; EISDIR and EINVAL carry their own message */
    char *data;           /* 'd': the bytes; 'm': the matching lines joined by line feeds */
    Py_ssize_t size;
    Py_ssize_t *numbers;  /* 'm' with lines: their numbers; count_only: numbers[0] is the count */
    Py_ssize_t count;
    int has_nul;
} FileResult;

enum { MODE_LITERAL = 0, MODE_CANDIDATES = 1, MODE_FILTER = 2 };

/* A file of at most this many bytes is read in one read() of its size and one byte
 * more, which also tells it ended: most files of a tree are, and each read saved is a
 * system call. A larger one is read a sniff first, so that a binary file costs a sniff. */
#define WHOLE_READ_BYTES (1 << 16)

/* The bytes of regular file `name` of `dir_fd` as read_searchable_at reads them, into
 * *data / *size; or a code: 'e' (errno in *error), 'l' (more than `most` bytes). 0 when
 * read. Called without the GIL. */
static char
read_file(int dir_fd, const char *name, Py_ssize_t sniff, Py_ssize_t most, char **data,
          Py_ssize_t *size, int *error)
{
    int fd = openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        *error = errno;
        return 'e';
    }
    char code = 0;
    struct stat info;
    if (fstat(fd, &info) < 0) {
        *error = errno;
        code = 'e';
    } else if (S_ISDIR(info.st_mode)) {
        *error = EISDIR;
        code = 'e';
    } else if (!S_ISREG(info.st_mode)) {
        *error = EINVAL;
        code = 'e';
    } else if (info.st_size > most) {
        code = 'l';
    } else {
        Py_ssize_t ask = sniff <= info.st_size && info.st_size < WHOLE_READ_BYTES
                         ? info.st_size + 1 : sniff;
        char *buffer = malloc((size_t)ask);
        ssize_t got = -1;
        if (buffer != NULL) {
            do {
                got = read(fd, buffer, (size_t)ask);
            } while (got < 0 && errno == EINTR);
        } else {
            errno = ENOMEM;
        }
        /* A read of a regular file returns less than asked only at its end. */
        if (got < 0) {
            *error = errno;
            code = 'e';
            free(buffer);
        } else if (got == ask && memchr(buffer, 0, (size_t)(sniff < got ? sniff : got)) == NULL) {
            int too_large = 0;
            Py_ssize_t total = 0;
            buffer = read_rest(fd, buffer, got, (Py_ssize_t)info.st_size + 1, most, &total,
                               &too_large);
            if (buffer == NULL) {
                if (too_large) {
                    code = 'l';
                } else {
                    *error = errno;
                    code = 'e';
                }
            } else {
                *data = buffer;
                *size = total;
            }
        } else {
            *data = buffer;
            *size = got;
        }
    }
    close(fd);
    return code;
}

/* ------------------------------------------------------------------ automata */

/* A regular expression's table, made by janito_files._automaton.build: four uint16
 * (classes, states, first, matched), a byte's class for each of the 256 bytes (0xFE the
 * line feed, 0xFF a byte past ASCII), the moves (uint16, states x classes), then a byte a
 * state that says whether it matches at a line's end. */
#define AUTOMATON_NEWLINE 0xFE

typedef struct {
    size_t classes, first, matched;
    const unsigned char *byte_class, *at_end;
    const uint16_t *moves;
} Table;

/* Read and check `object` as a table (every move within it); 0, or -1 with ValueError. */
static int
read_table(PyObject *object, Table *table)
{
    char *bytes;
    Py_ssize_t size;
    if (PyBytes_AsStringAndSize(object, &bytes, &size) < 0)
        return -1;
    uint16_t header[4];
    if (size < (Py_ssize_t)sizeof header + 256)
        goto bad;
    memcpy(header, bytes, sizeof header);
    size_t classes = header[0], states = header[1];
    table->classes = classes;
    table->first = header[2];
    table->matched = header[3];
    table->byte_class = (const unsigned char *)bytes + sizeof header;
    /* a bytes object's data is aligned for any type, and 8 + 256 keeps it so for uint16 */
    table->moves = (const uint16_t *)(const void *)(table->byte_class + 256);
    table->at_end = table->byte_class + 256 + states * classes * 2;
    if (classes == 0 || states == 0 || table->first >= states || table->matched >= states
        || (size_t)size != sizeof header + 256 + states * classes * 2 + states
        || ((uintptr_t)table->moves & 1) != 0)
        goto bad;
    for (int b = 0; b < 256; b++)
        if (table->byte_class[b] < AUTOMATON_NEWLINE && table->byte_class[b] >= classes)
            goto bad;
    for (size_t k = 0; k < states * classes; k++)
        if (table->moves[k] >= states)
            goto bad; /* it would read past the table */
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "not an automaton's table");
    return -1;
}

enum { LINE_MISSES, LINE_MATCHES, LINE_UNSURE };

/* Walk the line that starts at `p` (it ends at a line feed or at `end`): whether it
 * matches, or is unsure (a byte past ASCII came first); `*stop` is where it ends. */
static int
walk_line(const Table *table, const unsigned char *p, const unsigned char *end,
          const unsigned char **stop)
{
    size_t state = table->first;
    int answer = LINE_MISSES;
    for (; p < end; p++) {
        unsigned char kind = table->byte_class[*p];
        if (kind == AUTOMATON_NEWLINE)
            break;
        if (kind > AUTOMATON_NEWLINE) {
            answer = LINE_UNSURE;
            break;
        }
        state = table->moves[state * table->classes + kind];
        if (state == table->matched) {
            answer = LINE_MATCHES;
            break;
        }
    }
    if (answer != LINE_MISSES) {
        const unsigned char *feed = memchr(p, '\n', (size_t)(end - p));
        p = feed != NULL ? feed : end;
    } else if (table->at_end[state]) {
        answer = LINE_MATCHES;
    }
    *stop = p;
    return answer;
}

/* BytesMatcher.count: the lines of `hay` holding the needle. */
static Py_ssize_t
count_lines(const char *hay, Py_ssize_t size, const char *needle, Py_ssize_t n)
{
    Py_ssize_t lines = 0, at = find(hay, size, 0, needle, n);
    while (at >= 0) {
        lines++;
        const char *feed = memchr(hay + at, '\n', (size_t)(size - at));
        if (feed == NULL)
            break;
        at = find(hay, size, feed - hay + 1, needle, n);
    }
    return lines;
}

/* literal_lines without Python objects: the numbers into r->numbers, the lines joined
 * into r->data; with a table, only the lines it does not answer as missing the pattern.
 * 0, or -1 out of memory. */
static int
collect_lines(FileResult *r, const char *hay, const char *data, Py_ssize_t size,
              const char *needle, Py_ssize_t n, Py_ssize_t limit, const Table *table)
{
    Py_ssize_t capacity = 0, used = 0, numbers_capacity = 0, line_no = 1, counted = 0;
    Py_ssize_t at = limit > 0 ? find(hay, size, 0, needle, n) : -1;
    while (at >= 0) {
        Py_ssize_t start = line_start(data, at);
        const char *feed = memchr(data + at, '\n', (size_t)(size - at));
        Py_ssize_t end = feed ? feed - data : size;
        const unsigned char *stop;
        if (table != NULL
            && walk_line(table, (const unsigned char *)data + start,
                         (const unsigned char *)data + size, &stop) == LINE_MISSES) {
            /* its line feeds are counted with the next line kept, if any */
            if (feed == NULL)
                break;
            at = find(hay, size, end + 1, needle, n);
            continue;
        }
        line_no += count_line_feeds(data, counted, start);
        counted = start;
        if (r->count == numbers_capacity) {
            numbers_capacity = numbers_capacity * 2 + 16;
            Py_ssize_t *grown = realloc(r->numbers, (size_t)numbers_capacity * sizeof *grown);
            if (grown == NULL)
                return -1;
            r->numbers = grown;
        }
        r->numbers[r->count++] = line_no;
        Py_ssize_t needed = used + (end - start) + 1;
        if (needed > capacity) {
            Py_ssize_t grown_size = needed + needed / 2 + 4096;
            char *grown = realloc(r->data, (size_t)grown_size);
            if (grown == NULL)
                return -1;
            r->data = grown;
            capacity = grown_size;
        }
        if (r->count > 1)
            r->data[used++] = '\n';
        memcpy(r->data + used, data + start, (size_t)(end - start));
        used += end - start;
        if (feed == NULL || --limit <= 0)
            break;
        at = find(hay, size, end + 1, needle, n);
    }
    r->size = used;
    return 0;
}

/* One file of scan_files, without the GIL. */
static void
scan_one(FileResult *r, int dir_fd, const char *name, Py_ssize_t sniff, Py_ssize_t most,
         const char *needle, Py_ssize_t n, int fold, Py_ssize_t limit, int count_only,
         int mode, const Table *table)
{
    char *data = NULL;
    Py_ssize_t size = 0;
    r->code = read_file(dir_fd, name, sniff, most, &data, &size, &r->error);
    if (r->code)
        return;
    Py_ssize_t head = size < sniff ? size : sniff;
    if (memchr(data, 0, (size_t)head) != NULL) {
        free(data);
        r->code = 'b';
        return;
    }
    char *hay = data;
    if (n && fold) {
        hay = malloc(size ? (size_t)size : 1);
        if (hay == NULL)
            goto no_memory;
        for (Py_ssize_t i = 0; i < size; i++) {
            unsigned char c = (unsigned char)data[i];
            hay[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
    }
    if (mode == MODE_FILTER) {
        if (n && find(hay, size, 0, needle, n) < 0) {
            r->code = 'n';
            free(data);
        } else {
            r->code = 'd';
            r->data = data;
            r->size = size;
        }
        if (hay != data)
            free(hay);
        return;
    }
    if (mode == MODE_LITERAL && count_only) {
        Py_ssize_t lines = count_lines(hay, size, needle, n);
        if (lines) {
            r->numbers = malloc(sizeof *r->numbers);
            if (r->numbers == NULL)
                goto no_memory;
            r->numbers[0] = lines;
            r->count = 1;
        }
    } else if (collect_lines(r, hay, data, size, needle, n,
                             mode == MODE_CANDIDATES ? PY_SSIZE_T_MAX : limit,
                             mode == MODE_CANDIDATES ? table : NULL) < 0) {
        goto no_memory;
    }
    if (hay != data)
        free(hay);
    /* a NUL byte past the sniffed head matters only to a file with lines found: most
     * files of a search have none, and are not read a second time for it */
    int has_nul = r->count && memchr(data, 0, (size_t)size) != NULL;
    free(data);
    if (!r->count)
        r->code = 'n';
    else if (has_nul && mode == MODE_LITERAL)
        r->code = 'b';
    else
        r->code = 'm';
    r->has_nul = has_nul;
    if (r->code != 'm') {
        free(r->numbers);
        free(r->data);
        r->numbers = NULL;
        r->data = NULL;
        r->count = r->size = 0;
    }
    return;

no_memory:
    if (hay != data)
        free(hay);
    free(data);
    free(r->numbers);
    free(r->data);
    r->numbers = NULL;
    r->data = NULL;
    r->count = r->size = 0;
    r->code = 'e';
    r->error = ENOMEM;
}

static PyObject *
os_error(int code, PyObject *name)
{
    const char *message = code == EISDIR ? "the path is a folder"
        : code == EINVAL ? "the path is not a regular file (a FIFO, socket or device)"
        : strerror(code);
    return PyObject_CallFunction(PyExc_OSError, "isO", code, message, name);
}

/* The Python object of one file's answer (a new reference), or NULL with an exception. */
static PyObject *
payload(FileResult *r, int count_only, int mode, PyObject *name)
{
    if (r->code == 'e')
        return os_error(r->error, name);
    if (r->code == 'd')
        return PyBytes_FromStringAndSize(r->data ? r->data : "", r->size);
    if (mode == MODE_LITERAL && count_only)
        return PyLong_FromSsize_t(r->numbers[0]);
    PyObject *numbers = PyList_New(r->count);
    if (numbers == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < r->count; i++) {
        PyObject *number = PyLong_FromSsize_t(r->numbers[i]);
        if (number == NULL) {
            Py_DECREF(numbers);
            return NULL;
        }
        PyList_SetItem(numbers, i, number);
    }
    PyObject *joined = PyBytes_FromStringAndSize(r->data ? r->data : "", r->size);
    if (joined == NULL) {
        Py_DECREF(numbers);
        return NULL;
    }
    PyObject *answer = mode == MODE_CANDIDATES
        ? Py_BuildValue("(NNO)", numbers, joined, r->has_nul ? Py_True : Py_False)
        : Py_BuildValue("(NN)", numbers, joined);
    return answer;
}

static PyObject *
scan_files(PyObject *Py_UNUSED(module), PyObject *args)
{
    int dir_fd, fold, count_only, mode;
    PyObject *names, *needle_object, *table_object = Py_None;
    Py_ssize_t sniff, most, limit, budget;
    Table table_read, *table = NULL;
    if (!PyArg_ParseTuple(args, "iO!nnOpnpin|O:scan_files", &dir_fd, &PyList_Type, &names,
                          &sniff, &most, &needle_object, &fold, &limit, &count_only, &mode,
                          &budget, &table_object))
        return NULL;
    if (table_object != Py_None) {
        if (read_table(table_object, &table_read) < 0)
            return NULL;
        table = &table_read;
    }
    if (sniff <= 0 || most < 0) {
        PyErr_SetString(PyExc_ValueError, "sniff must be positive and most not negative");
        return NULL;
    }
    if (mode < MODE_LITERAL || mode > MODE_FILTER) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0, 1 or 2");
        return NULL;
    }
    char *needle = NULL;
    Py_ssize_t n = 0;
    if (needle_object != Py_None) {
        if (!PyBytes_Check(needle_object)) {
            PyErr_SetString(PyExc_TypeError, "needle must be bytes or None");
            return NULL;
        }
        if (PyBytes_AsStringAndSize(needle_object, &needle, &n) < 0)
            return NULL;
    }
    if (n == 0 && mode != MODE_FILTER) {
        PyErr_SetString(PyExc_ValueError, "the needle is empty");
        return NULL;
    }
    Py_ssize_t total = PyList_Size(names);
    PyObject **encoded = PyMem_Calloc(total ? (size_t)total : 1, sizeof *encoded);
    FileResult *results = PyMem_Calloc(total ? (size_t)total : 1, sizeof *results);
    const char **paths = PyMem_Calloc(total ? (size_t)total : 1, sizeof *paths);
    PyObject *codes = NULL, *payloads = NULL, *answer = NULL;
    Py_ssize_t done = 0;
    if (encoded == NULL || results == NULL || paths == NULL) {
        PyErr_NoMemory();
        goto end;
    }
    for (Py_ssize_t i = 0; i < total; i++) {
        PyObject *name = PyList_GetItem(names, i);
        if (name == NULL || !PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be a list of str");
            goto end;
        }
        encoded[i] = PyUnicode_EncodeFSDefault(name);
        if (encoded[i] == NULL)
            goto end;
        char *path;
        Py_ssize_t path_size;
        if (PyBytes_AsStringAndSize(encoded[i], &path, &path_size) < 0)
            goto end;
        if (path_size == 0 || memchr(path, '/', (size_t)path_size) != NULL
            || (size_t)path_size != strlen(path) || strcmp(path, ".") == 0
            || strcmp(path, "..") == 0) {
            PyErr_SetString(PyExc_ValueError, "name must be one non-empty path component");
            goto end;
        }
        paths[i] = path;
    }

    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t kept = 0;
    while (done < total && kept < budget) {
        FileResult *r = &results[done];
        scan_one(r, dir_fd, paths[done], sniff, most, needle, n, fold, limit, count_only,
                 mode, table);
        kept += r->size + r->count * (Py_ssize_t)sizeof(Py_ssize_t);
        done++;
    }
    Py_END_ALLOW_THREADS

    codes = PyBytes_FromStringAndSize(NULL, done);
    payloads = PyList_New(0);
    if (codes == NULL || payloads == NULL)
        goto end;
    char *code_bytes = PyBytes_AsString(codes);
    if (code_bytes == NULL)
        goto end;
    for (Py_ssize_t i = 0; i < done; i++) {
        FileResult *r = &results[i];
        code_bytes[i] = r->code;
        if (r->code == 'e' || r->code == 'd' || r->code == 'm') {
            PyObject *item = payload(r, count_only, mode, PyList_GetItem(names, i));
            if (item == NULL || PyList_Append(payloads, item) < 0) {
                Py_XDECREF(item);
                goto end;
            }
            Py_DECREF(item);
        }
    }
    answer = PyTuple_Pack(2, codes, payloads);

end:
    if (results != NULL) {
        for (Py_ssize_t i = 0; i < total; i++) {
            free(results[i].data);
            free(results[i].numbers);
        }
    }
    if (encoded != NULL) {
        for (Py_ssize_t i = 0; i < total; i++)
            Py_XDECREF(encoded[i]);
    }
    PyMem_Free(encoded);
    PyMem_Free(results);
    PyMem_Free(paths);
    Py_XDECREF(codes);
    Py_XDECREF(payloads);
    return answer;
}

/* ---------------------------------------------------------------- Searcher */

/* Batches of scan_files given to threads that never take the GIL, and taken back in the
 * order they were given. The searching thread turns names into C strings when it gives a
 * batch and turns the answers into Python objects when it takes one: the workers only
 * make system calls and read memory they were handed. */

#define MAX_WORKERS 16

typedef struct Job {
    struct Job *next;
    PyObject *names;     /* the list given (a reference), for the errors' file names */
    PyObject **encoded;  /* each name in the file system's encoding */
    const char **paths;
    Py_ssize_t total, done, limit;
    Py_ssize_t kept;     /* what its answer holds, once finished */
    int dir_fd, finished;
    FileResult *results;
} Job;

typedef struct {
    PyObject_HEAD
    pthread_mutex_t lock;
    pthread_cond_t work, ready;
    Job *head, *tail, *waiting;  /* given and not taken; the first not started */
    int stopping, workers, started, idle;  /* idle: workers waiting for a batch */
    pthread_t threads[MAX_WORKERS];
    Py_ssize_t sniff, most, budget;
    /* held: what the answers finished and not taken hold; a worker starts a batch other
     * than the oldest not taken only while it is below hold (the oldest always starts, so
     * the searching thread's take() never waits on a batch held back) */
    Py_ssize_t held, hold;
    PyObject *needle_object;
    char *needle;
    Py_ssize_t n;
    int fold, count_only, mode;
    PyObject *table_object;  /* a regular expression's table, or None */
    Table table;
} Searcher;

static void
free_job(Job *job)
{
    for (Py_ssize_t i = 0; i < job->total; i++) {
        free(job->results[i].data);
        free(job->results[i].numbers);
        Py_XDECREF(job->encoded[i]);
    }
    Py_XDECREF(job->names);
    PyMem_Free(job->encoded);
    PyMem_Free(job->paths);
    PyMem_Free(job->results);
    PyMem_Free(job);
}

static void *
work(void *argument)
{
    Searcher *self = argument;
    pthread_mutex_lock(&self->lock);
    for (;;) {
        while (!self->stopping && (self->waiting == NULL || (self->waiting != self->head
                                                             && self->held >= self->hold))) {
            self->idle++;
            pthread_cond_wait(&self->work, &self->lock);
            self->idle--;
        }
        if (self->stopping)
            break;
        Job *job = self->waiting;
        self->waiting = job->next;
        pthread_mutex_unlock(&self->lock);
        Py_ssize_t kept = 0;
        while (job->done < job->total && kept < self->budget) {
            FileResult *r = &job->results[job->done];
            scan_one(r, job->dir_fd, job->paths[job->done], self->sniff, self->most,
                     self->needle, self->n, self->fold, job->limit, self->count_only,
                     self->mode, self->table_object != Py_None ? &self->table : NULL);
            kept += r->size + r->count * (Py_ssize_t)sizeof(Py_ssize_t);
            job->done++;
        }
        pthread_mutex_lock(&self->lock);
        job->kept = kept;
        self->held += kept;
        job->finished = 1;
        pthread_cond_broadcast(&self->ready);
    }
    pthread_mutex_unlock(&self->lock);
    return NULL;
}

/* Stops and joins the workers (they finish the batch they are in), frees every job. */
static void
stop(Searcher *self)
{
    if (self->started) {
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&self->lock);
        self->stopping = 1;
        pthread_cond_broadcast(&self->work);
        pthread_mutex_unlock(&self->lock);
        for (int i = 0; i < self->started; i++)
            pthread_join(self->threads[i], NULL);
        Py_END_ALLOW_THREADS
        self->started = 0;
    }
    self->stopping = 1;
    while (self->head != NULL) {
        Job *job = self->head;
        self->head = job->next;
        free_job(job);
    }
    self->tail = self->waiting = NULL;
}

static int
searcher_init(PyObject *object, PyObject *args, PyObject *kwargs)
{
    Searcher *self = (Searcher *)object;
    static char *keywords[] = {"workers", "sniff", "most", "needle", "fold", "count_only",
                               "mode", "budget", "hold", "table", NULL};
    int workers;
    PyObject *table_object = Py_None;
    self->hold = PY_SSIZE_T_MAX;
    if (self->needle_object != NULL) {
        PyErr_SetString(PyExc_TypeError, "a Searcher is made once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "innOppin|nO:Searcher", keywords, &workers,
                                     &self->sniff, &self->most, &self->needle_object,
                                     &self->fold, &self->count_only, &self->mode,
                                     &self->budget, &self->hold, &table_object)) {
        self->needle_object = NULL;
        return -1;
    }
    if (table_object != Py_None && read_table(table_object, &self->table) < 0) {
        self->needle_object = NULL;
        return -1;
    }
    if (workers < 1 || workers > MAX_WORKERS) {
        self->needle_object = NULL;
        PyErr_SetString(PyExc_ValueError, "workers must be between 1 and 16");
        return -1;
    }
    if (self->sniff <= 0 || self->most < 0) {
        self->needle_object = NULL;
        PyErr_SetString(PyExc_ValueError, "sniff must be positive and most not negative");
        return -1;
    }
    if (self->mode < MODE_LITERAL || self->mode > MODE_FILTER) {
        self->needle_object = NULL;
        PyErr_SetString(PyExc_ValueError, "mode must be 0, 1 or 2");
        return -1;
    }
    if (self->needle_object != Py_None) {
        if (!PyBytes_Check(self->needle_object)) {
            self->needle_object = NULL;
            PyErr_SetString(PyExc_TypeError, "needle must be bytes or None");
            return -1;
        }
        if (PyBytes_AsStringAndSize(self->needle_object, &self->needle, &self->n) < 0) {
            self->needle_object = NULL;
            return -1;
        }
    }
    if (self->n == 0 && self->mode != MODE_FILTER) {
        self->needle_object = NULL;
        PyErr_SetString(PyExc_ValueError, "the needle is empty");
        return -1;
    }
    Py_INCREF(self->needle_object);
    Py_INCREF(table_object);
    self->table_object = table_object;
    self->workers = workers;
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->work, NULL);
    pthread_cond_init(&self->ready, NULL);
    return 0;
}

static PyObject *
searcher_give(PyObject *object, PyObject *args)
{
    Searcher *self = (Searcher *)object;
    int dir_fd;
    PyObject *names;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "iO!n:give", &dir_fd, &PyList_Type, &names, &limit))
        return NULL;
    if (self->needle_object == NULL || self->stopping) {
        PyErr_SetString(PyExc_ValueError, "the searcher is closed");
        return NULL;
    }
    Py_ssize_t total = PyList_Size(names);
    Job *job = PyMem_Calloc(1, sizeof *job);
    if (job == NULL)
        return PyErr_NoMemory();
    job->encoded = PyMem_Calloc(total ? (size_t)total : 1, sizeof *job->encoded);
    job->paths = PyMem_Calloc(total ? (size_t)total : 1, sizeof *job->paths);
    job->results = PyMem_Calloc(total ? (size_t)total : 1, sizeof *job->results);
    if (job->encoded == NULL || job->paths == NULL || job->results == NULL) {
        free_job(job);
        return PyErr_NoMemory();
    }
    job->total = total;
    for (Py_ssize_t i = 0; i < total; i++) {
        PyObject *name = PyList_GetItem(names, i);
        if (name == NULL || !PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "names must be a list of str");
            free_job(job);
            return NULL;
        }
        job->encoded[i] = PyUnicode_EncodeFSDefault(name);
        char *path;
        Py_ssize_t path_size;
        if (job->encoded[i] == NULL
            || PyBytes_AsStringAndSize(job->encoded[i], &path, &path_size) < 0) {
            free_job(job);
            return NULL;
        }
        if (path_size == 0 || memchr(path, '/', (size_t)path_size) != NULL
            || (size_t)path_size != strlen(path) || strcmp(path, ".") == 0
            || strcmp(path, "..") == 0) {
            PyErr_SetString(PyExc_ValueError, "name must be one non-empty path component");
            free_job(job);
            return NULL;
        }
        job->paths[i] = path;
    }
    Py_INCREF(names);
    job->names = names;
    job->dir_fd = dir_fd;
    job->limit = limit;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    /* A worker calls no deeper than scan_one: a small stack is quicker to make. */
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    while (self->started < self->workers) {
        int failed = pthread_create(&self->threads[self->started], &attributes, work, self);
        if (failed) {
            if (self->started)
                break; /* fewer workers than asked: enough */
            pthread_attr_destroy(&attributes);
            free_job(job);
            errno = failed;
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        self->started++;
    }
    pthread_attr_destroy(&attributes);
    pthread_mutex_lock(&self->lock);
    if (self->tail != NULL)
        self->tail->next = job;
    else
        self->head = job;
    self->tail = job;
    if (self->waiting == NULL)
        self->waiting = job;
    /* A busy worker takes the next batch when it is done: waking one that is not
     * waiting would only hand the CPU to it, and keep the walk waiting for it. */
    if (self->idle)
        pthread_cond_signal(&self->work);
    pthread_mutex_unlock(&self->lock);
    RETURN_NONE;
}

static PyObject *
searcher_take(PyObject *object, PyObject *Py_UNUSED(ignored))
{
    Searcher *self = (Searcher *)object;
    if (self->head == NULL) {
        PyErr_SetString(PyExc_ValueError, "no batch was given");
        return NULL;
    }
    Job *job = self->head;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lock);
    while (!job->finished)
        pthread_cond_wait(&self->ready, &self->lock);
    self->head = job->next;
    if (self->head == NULL)
        self->tail = NULL;
    self->held -= job->kept;
    /* what it held is free now, and a batch held back may be the oldest: a worker waiting
     * for one may start it */
    if (self->idle && self->waiting != NULL)
        pthread_cond_signal(&self->work);
    pthread_mutex_unlock(&self->lock);
    Py_END_ALLOW_THREADS
    PyObject *codes = PyBytes_FromStringAndSize(NULL, job->done);
    PyObject *payloads = PyList_New(0);
    PyObject *answer = NULL;
    if (codes == NULL || payloads == NULL)
        goto end;
    char *code_bytes = PyBytes_AsString(codes);
    if (code_bytes == NULL)
        goto end;
    for (Py_ssize_t i = 0; i < job->done; i++) {
        FileResult *r = &job->results[i];
        code_bytes[i] = r->code;
        if (r->code == 'e' || r->code == 'd' || r->code == 'm') {
            PyObject *item = payload(r, self->count_only, self->mode,
                                     PyList_GetItem(job->names, i));
            if (item == NULL || PyList_Append(payloads, item) < 0) {
                Py_XDECREF(item);
                goto end;
            }
            Py_DECREF(item);
        }
    }
    answer = PyTuple_Pack(2, codes, payloads);
end:
    free_job(job);
    Py_XDECREF(codes);
    Py_XDECREF(payloads);
    return answer;
}

static PyObject *
searcher_ready(PyObject *object, PyObject *Py_UNUSED(ignored))
{
    Searcher *self = (Searcher *)object;
    int finished = 0;
    if (self->head != NULL) {
        pthread_mutex_lock(&self->lock);
        finished = self->head->finished;
        pthread_mutex_unlock(&self->lock);
    }
    return PyBool_FromLong(finished);
}

static PyObject *
searcher_close(PyObject *object, PyObject *Py_UNUSED(ignored))
{
    stop((Searcher *)object);
    RETURN_NONE;
}

static void
searcher_dealloc(PyObject *object)
{
    Searcher *self = (Searcher *)object;
    if (self->needle_object != NULL) {
        stop(self);
        pthread_mutex_destroy(&self->lock);
        pthread_cond_destroy(&self->work);
        pthread_cond_destroy(&self->ready);
        Py_CLEAR(self->needle_object);
        Py_CLEAR(self->table_object);
    }
    PyTypeObject *type = Py_TYPE(object);
    freefunc release = (freefunc)PyType_GetSlot(type, Py_tp_free);
    release(object);
    Py_DECREF(type);
}

static PyMethodDef searcher_methods[] = {
    {"give", searcher_give, METH_VARARGS,
     "give(dir_fd, names, limit): hand out a batch; dir_fd must stay open until it is taken"},
    {"take", searcher_take, METH_NOARGS,
     "take() -> (codes, payloads) of the oldest batch not taken, as scan_files answers"},
    {"ready", searcher_ready, METH_NOARGS,
     "ready() -> whether the oldest batch not taken is answered: take() would not wait"},
    {"close", searcher_close, METH_NOARGS,
     "close(): stop the workers (after the batch each is in) and drop every batch"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot searcher_slots[] = {
    {Py_tp_doc, "Searcher(workers, sniff, most, needle, fold, count_only, mode, budget, "
                "hold=no limit, table=None): scan_files on worker threads, the answers waiting "
                "to be taken holding about hold bytes at most"},
    {Py_tp_init, searcher_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, searcher_dealloc},
    {Py_tp_methods, searcher_methods},
    {0, NULL},
};

static PyType_Spec searcher_spec = {
    "janito_files._speedups.Searcher", sizeof(Searcher), 0, Py_TPFLAGS_DEFAULT,
    searcher_slots,
};


/* ------------------------------------------------------------------ list_folder */

typedef struct {
    const char *name;
    size_t length;
    unsigned char type;  /* a d_type */
} Listed;

/* The code point at s[*at] as Python decodes a file name (UTF-8; a byte of an invalid
 * sequence as U+DC80 to U+DCFF, as "surrogateescape" gives it), moving *at past it. */
static unsigned int
next_point(const unsigned char *s, size_t size, size_t *at)
{
    size_t i = *at, left = size - i;
    unsigned char b = s[i];
    if (b < 0x80) {
        *at = i + 1;
        return b;
    }
    if (b >= 0xC2 && b <= 0xDF) {
        if (left >= 2 && (s[i + 1] & 0xC0) == 0x80) {
            *at = i + 2;
            return ((unsigned int)(b & 0x1F) << 6) | (s[i + 1] & 0x3F);
        }
    } else if (b >= 0xE0 && b <= 0xEF) {
        /* no overlong forms (E0 80..9F) and no surrogates (ED A0..BF) */
        unsigned char low = b == 0xE0 ? 0xA0 : 0x80, high = b == 0xED ? 0x9F : 0xBF;
        if (left >= 3 && s[i + 1] >= low && s[i + 1] <= high && (s[i + 2] & 0xC0) == 0x80) {
            *at = i + 3;
            return ((unsigned int)(b & 0x0F) << 12) | ((unsigned int)(s[i + 1] & 0x3F) << 6)
                   | (s[i + 2] & 0x3F);
        }
    } else if (b >= 0xF0 && b <= 0xF4) {
        /* no overlong forms (F0 80..8F) and nothing past U+10FFFF (F4 90..) */
        unsigned char low = b == 0xF0 ? 0x90 : 0x80, high = b == 0xF4 ? 0x8F : 0xBF;
        if (left >= 4 && s[i + 1] >= low && s[i + 1] <= high && (s[i + 2] & 0xC0) == 0x80
            && (s[i + 3] & 0xC0) == 0x80) {
            *at = i + 4;
            return ((unsigned int)(b & 0x07) << 18) | ((unsigned int)(s[i + 1] & 0x3F) << 12)
                   | ((unsigned int)(s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F);
        }
    }
    /* Every byte of an invalid sequence is escaped alone: none of them starts a valid one,
     * so stepping one byte gives what the decoder gives. */
    *at = i + 1;
    return 0xDC00u + b;
}

/* Names in the order of the strings Python decodes them to (by code point). */
static int
by_code_point(const void *left, const void *right)
{
    const Listed *a = left, *b = right;
    const unsigned char *s = (const unsigned char *)a->name, *t = (const unsigned char *)b->name;
    size_t i = 0, j = 0;
    while (i < a->length && j < b->length) {
        if (s[i] < 0x80 && t[j] < 0x80) {
            if (s[i] != t[j])
                return s[i] < t[j] ? -1 : 1;
            i++;
            j++;
            continue;
        }
        unsigned int p = next_point(s, a->length, &i), q = next_point(t, b->length, &j);
        if (p != q)
            return p < q ? -1 : 1;
    }
    return (i < a->length) - (j < b->length);
}

/* A folder's entries read without the GIL: names (each NUL-terminated, in one buffer)
 * with their types, sorted as Python sorts the strings it decodes them to. */
typedef struct {
    Listed *items;
    char *names;
    size_t count;
} Listing;

static void
listing_free(Listing *listing)
{
    free(listing->items);
    free(listing->names);
    listing->items = NULL;
    listing->names = NULL;
    listing->count = 0;
}

/* Read the folder open as fd into *listing, through a copy of the descriptor, from its
 * start, leaving it at its start; 0 or an errno. Takes no GIL and touches no Python. */
static int
read_folder(int fd, Listing *listing)
{
    Listed *items = NULL;
    char *names = NULL;
    size_t count = 0, room = 0, used = 0, size = 0;
    int failed = 0;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *folder = copy < 0 ? NULL : fdopendir(copy);
    if (folder == NULL) {
        failed = errno;
        if (copy >= 0)
            close(copy);
        return failed;
    }
    rewinddir(folder);
    for (;;) {
        errno = 0;
        struct dirent *entry = readdir(folder);
        if (entry == NULL) {
            failed = errno;
            break;
        }
        const char *name = entry->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
            continue;
        size_t length = strlen(name);
        if (count == room) {
            room = room ? room * 2 : 64;
            Listed *more = realloc(items, room * sizeof(Listed));
            if (more == NULL) {
                failed = ENOMEM;
                break;
            }
            items = more;
        }
        if (used + length + 1 > size) {
            /* names are kept by offset until the buffer stops moving */
            size_t bigger = size ? size * 2 : 16384;
            while (bigger < used + length + 1)
                bigger *= 2;
            char *more = realloc(names, bigger);
            if (more == NULL) {
                failed = ENOMEM;
                break;
            }
            names = more;
            size = bigger;
        }
        memcpy(names + used, name, length + 1);
        items[count].name = (const char *)(uintptr_t)used;
        items[count].length = length;
        items[count].type = entry->d_type;
        used += length + 1;
        count++;
    }
    rewinddir(folder);  /* the copy shares its position with fd */
    closedir(folder);
    if (failed) {
        free(items);
        free(names);
        return failed;
    }
    for (size_t k = 0; k < count; k++)
        items[k].name = names + (uintptr_t)items[k].name;
    qsort(items, count, sizeof(Listed), by_code_point);
    for (size_t k = 0; k < count; k++) {
        if (items[k].type != DT_UNKNOWN)
            continue;
        /* a file system that does not say: asked, as os.DirEntry asks */
        struct stat info;
        if (fstatat(fd, items[k].name, &info, AT_SYMLINK_NOFOLLOW) != 0)
            items[k].type = DT_FIFO;  /* gone meanwhile: "other" */
        else if (S_ISREG(info.st_mode))
            items[k].type = DT_REG;
        else if (S_ISDIR(info.st_mode))
            items[k].type = DT_DIR;
        else if (S_ISLNK(info.st_mode))
            items[k].type = DT_LNK;
        else
            items[k].type = DT_FIFO;
    }
    listing->items = items;
    listing->names = names;
    listing->count = count;
    return 0;
}

/* (names, kinds) of a listing, as janito_core._fswalk.list_folder gives them. */
static PyObject *
listing_answer(const Listing *listing)
{
    PyObject *file = PyUnicode_InternFromString("file");
    PyObject *directory = PyUnicode_InternFromString("directory");
    PyObject *symlink = PyUnicode_InternFromString("symlink");
    PyObject *other = PyUnicode_InternFromString("other");
    PyObject *names = PyList_New((Py_ssize_t)listing->count);
    PyObject *kinds = PyList_New((Py_ssize_t)listing->count);
    PyObject *answer = NULL;
    if (file == NULL || directory == NULL || symlink == NULL || other == NULL || names == NULL
        || kinds == NULL)
        goto done;
    for (size_t k = 0; k < listing->count; k++) {
        const Listed *item = &listing->items[k];
        PyObject *name = PyUnicode_DecodeFSDefaultAndSize(item->name, (Py_ssize_t)item->length);
        if (name == NULL)
            goto done;
        PyList_SetItem(names, (Py_ssize_t)k, name);
        PyObject *kind = item->type == DT_REG ? file : item->type == DT_DIR ? directory
                         : item->type == DT_LNK ? symlink : other;
        Py_INCREF(kind);
        PyList_SetItem(kinds, (Py_ssize_t)k, kind);
    }
    answer = PyTuple_Pack(2, names, kinds);
done:
    Py_XDECREF(file);
    Py_XDECREF(directory);
    Py_XDECREF(symlink);
    Py_XDECREF(other);
    Py_XDECREF(names);
    Py_XDECREF(kinds);
    return answer;
}

/* list_folder(fd) -> (names, kinds): the entries of the folder open as fd, as
 * janito_core._fswalk.list_folder gives them: names sorted as Python sorts the strings,
 * kinds "file", "directory", "symlink" or "other", never following a link. The folder is
 * read through a copy of the descriptor, from its start, and left at its start; the
 * descriptor stays open. The reading and sorting run without the GIL. */
static PyObject *
list_folder(PyObject *module, PyObject *arg)
{
    long fd = PyLong_AsLong(arg);
    if (fd == -1 && PyErr_Occurred())
        return NULL;
    if (fd < 0 || fd > INT_MAX) {
        errno = EBADF;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    Listing listing = {0};
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = read_folder((int)fd, &listing);
    Py_END_ALLOW_THREADS
    if (failed) {
        errno = failed;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *answer = listing_answer(&listing);
    listing_free(&listing);
    return answer;
}

/* ------------------------------------------------------------ pick_plain, prefixed */

/* Whether kinds[i] is `kind` (the walk's kinds are the same interned strings). */
static int
same_kind(PyObject *its, PyObject *kind)
{
    return its == kind || (PyUnicode_Check(its) && PyUnicode_Compare(its, kind) == 0);
}

/* pick_plain(names, kinds, kind, how, start, end) -> the names of `kind` that a glob of
 * names decided by string tests picks (janito_files._steps.pick_plain_py): how "all",
 * "affixes" (starts with start, ends with end, the two not overlapping), "holds" (start
 * within) or "equal" (start). */
static PyObject *
pick_plain(PyObject *module, PyObject *args)
{
    PyObject *names, *kinds, *kind, *how, *start, *end;
    if (!PyArg_ParseTuple(args, "O!O!UUUU:pick_plain", &PyList_Type, &names, &PyList_Type,
                          &kinds, &kind, &how, &start, &end))
        return NULL;
    Py_ssize_t count = PyList_Size(names);
    if (PyList_Size(kinds) != count) {
        PyErr_SetString(PyExc_ValueError, "names and kinds differ in length");
        return NULL;
    }
    int mode = PyUnicode_CompareWithASCIIString(how, "all") == 0 ? 0
               : PyUnicode_CompareWithASCIIString(how, "affixes") == 0 ? 1
               : PyUnicode_CompareWithASCIIString(how, "holds") == 0 ? 2
               : PyUnicode_CompareWithASCIIString(how, "equal") == 0 ? 3 : -1;
    if (mode < 0) {
        PyErr_SetString(PyExc_ValueError, "how must be all, affixes, holds or equal");
        return NULL;
    }
    Py_ssize_t least = PyUnicode_GetLength(start) + PyUnicode_GetLength(end);
    PyObject *picked = PyList_New(0);
    if (picked == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *name = PyList_GetItem(names, k);
        if (!same_kind(PyList_GetItem(kinds, k), kind) || !PyUnicode_Check(name))
            continue;
        Py_ssize_t found = 1;
        if (mode == 1) {
            Py_ssize_t length = PyUnicode_GetLength(name);
            found = length >= least
                    && PyUnicode_Tailmatch(name, start, 0, length, -1) == 1
                    && PyUnicode_Tailmatch(name, end, 0, length, 1) == 1;
        } else if (mode == 2) {
            found = PyUnicode_Find(name, start, 0, PyUnicode_GetLength(name), 1);
            if (found == -2)
                goto failed;
            found = found >= 0;
        } else if (mode == 3) {
            found = PyUnicode_Compare(name, start) == 0;
        }
        if (PyErr_Occurred())
            goto failed;
        if (found && PyList_Append(picked, name) < 0)
            goto failed;
    }
    return picked;
failed:
    Py_DECREF(picked);
    return NULL;
}

/* prefixed(prefix, names) -> [prefix + name for name in names]. */
static PyObject *
prefixed(PyObject *module, PyObject *args)
{
    PyObject *prefix, *names;
    if (!PyArg_ParseTuple(args, "UO!:prefixed", &prefix, &PyList_Type, &names))
        return NULL;
    Py_ssize_t count = PyList_Size(names);
    PyObject *joined = PyList_New(count);
    if (joined == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *path = PyUnicode_Concat(prefix, PyList_GetItem(names, k));
        if (path == NULL) {
            Py_DECREF(joined);
            return NULL;
        }
        PyList_SetItem(joined, k, path);
    }
    return joined;
}

/* ------------------------------------------------------------------ a result's rows */

/* The rows {"path", "line", "text"} of a search's result, made in compiled code. */
typedef struct {
    PyObject *keys[3]; /* "path", "line", "text" */
    PyObject *list;
} Rows;

static int
rows_open(Rows *rows)
{
    static const char *const names[3] = {"path", "line", "text"};
    rows->list = PyList_New(0);
    for (int k = 0; k < 3; k++)
        rows->keys[k] = PyUnicode_InternFromString(names[k]);
    return rows->list != NULL && rows->keys[0] != NULL && rows->keys[1] != NULL
           && rows->keys[2] != NULL ? 0 : -1;
}

/* Append the row of line `number` of the file at `path`, its text the UTF-8 (with
 * replacement) of length bytes at `text`; 0, or -1 with an exception. */
static int
rows_add(Rows *rows, PyObject *path, PyObject *number, const char *text, Py_ssize_t length)
{
    PyObject *decoded = PyUnicode_DecodeUTF8(text, length, "replace");
    PyObject *row = decoded != NULL ? PyDict_New() : NULL;
    int failed = row == NULL
                 || PyDict_SetItem(row, rows->keys[0], path) < 0
                 || PyDict_SetItem(row, rows->keys[1], number) < 0
                 || PyDict_SetItem(row, rows->keys[2], decoded) < 0
                 || PyList_Append(rows->list, row) < 0;
    Py_XDECREF(decoded);
    Py_XDECREF(row);
    return failed ? -1 : 0;
}

/* The rows' list (a new reference) with `keep`, else NULL; the keys are let go. */
static PyObject *
rows_close(Rows *rows, int keep)
{
    for (int k = 0; k < 3; k++)
        Py_CLEAR(rows->keys[k]);
    PyObject *list = rows->list;
    rows->list = NULL;
    if (keep)
        return list;
    Py_XDECREF(list);
    return NULL;
}

/* found_rows(paths, payloads, line_chars) -> [{"path", "line", "text"}, ...], or None.
 *
 * The rows of a literal search's found files as janito_files._steps.found_rows_py makes
 * them: paths[i] names the file whose answer is payloads[i], (line numbers, its lines
 * joined by line feeds). Each line is decoded alone, which gives what decoding them
 * joined does (a line feed is never part of a multi-byte sequence). None, having made
 * nothing, where a line holds a carriage return or more than line_chars bytes (it may
 * need clipping), or where a payload's lines and numbers differ in count: Python's own
 * steps answer those. */
static PyObject *
found_rows(PyObject *module, PyObject *args)
{
    PyObject *paths, *payloads;
    Py_ssize_t line_chars;
    if (!PyArg_ParseTuple(args, "O!O!n:found_rows", &PyList_Type, &paths, &PyList_Type,
                          &payloads, &line_chars))
        return NULL;
    Py_ssize_t files = PyList_Size(payloads);
    if (PyList_Size(paths) != files) {
        PyErr_SetString(PyExc_ValueError, "paths and payloads differ in length");
        return NULL;
    }
    Rows rows;
    if (rows_open(&rows) < 0)
        return rows_close(&rows, 0);
    for (Py_ssize_t k = 0; k < files; k++) {
        PyObject *path = PyList_GetItem(paths, k);
        PyObject *payload = PyList_GetItem(payloads, k);
        PyObject *numbers = PyTuple_Check(payload) && PyTuple_Size(payload) == 2
                            ? PyTuple_GetItem(payload, 0) : NULL;
        PyObject *data = numbers != NULL ? PyTuple_GetItem(payload, 1) : NULL;
        if (numbers == NULL || !PyList_Check(numbers) || !PyBytes_Check(data)) {
            PyErr_SetString(PyExc_TypeError, "a payload is (list of line numbers, bytes)");
            return rows_close(&rows, 0);
        }
        char *start;
        Py_ssize_t size;
        if (PyBytes_AsStringAndSize(data, &start, &size) < 0)
            return rows_close(&rows, 0);
        const char *end = start + size;
        Py_ssize_t count = PyList_Size(numbers);
        if (memchr(start, '\r', (size_t)size) != NULL || count == 0)
            goto python;
        for (Py_ssize_t line = 0; line < count; line++) {
            const char *feed = memchr(start, '\n', (size_t)(end - start));
            const char *stop = feed != NULL ? feed : end;
            if ((feed == NULL) != (line == count - 1) || stop - start > line_chars)
                goto python;
            if (rows_add(&rows, path, PyList_GetItem(numbers, line), start, stop - start) < 0)
                return rows_close(&rows, 0);
            start = stop + 1;
        }
    }
    return rows_close(&rows, 1);
python:
    rows_close(&rows, 0);
    RETURN_NONE;
}

/* automaton_lines(table, text, pos, limit, line_chars, count_only)
 *   -> (numbers, texts, unsure), (count, unsure), or None
 *
 * The lines of `text` from `pos` (a line's start) that hold a match, as
 * janito_files._automaton.automaton_lines_py answers: the numbers (from 1 at pos) and
 * texts (without trailing carriage returns) of the first `limit` of them, with `unsure`
 * the indexes among them of lines the table cannot answer (a character past ASCII came
 * before it matched): their texts are the whole lines, for the engine to answer. With
 * count_only, how many lines match, and the texts of those the engine must answer. None
 * where a matching line is longer than line_chars bytes: the engine answers the text. */
static PyObject *
automaton_lines(PyObject *module, PyObject *args)
{
    PyObject *table_object, *text;
    Py_ssize_t pos, limit, line_chars;
    int count_only;
    Table table;
    if (!PyArg_ParseTuple(args, "SUnnnp:automaton_lines", &table_object, &text, &pos, &limit,
                          &line_chars, &count_only)
        || read_table(table_object, &table) < 0)
        return NULL;
    if (pos < 0 || pos > PyUnicode_GetLength(text)) {
        PyErr_SetString(PyExc_ValueError, "pos is not within the text");
        return NULL;
    }
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 == NULL) { /* a lone surrogate: not UTF-8, the engine reads it */
        PyErr_Clear();
        RETURN_NONE;
    }
    const unsigned char *p = (const unsigned char *)utf8;
    const unsigned char *end = p + size;
    for (Py_ssize_t skipped = 0; skipped < pos; skipped++) /* pos counts characters */
        do
            p++;
        while (p < end && (*p & 0xC0) == 0x80);
    PyObject *numbers = NULL, *texts = NULL, *unsure = PyList_New(0), *answer = NULL;
    if (unsure == NULL)
        return NULL;
    if (!count_only) {
        numbers = PyList_New(0);
        texts = PyList_New(0);
        if (numbers == NULL || texts == NULL)
            goto done;
    }
    Py_ssize_t count = 0, number = 0;
    if (!count_only && limit <= 0)
        p = end;
    for (; p < end; p++) { /* p++: past the line feed, or past the end */
        const unsigned char *start = p;
        number++;
        int found = walk_line(&table, start, end, &p);
        if (found == LINE_MISSES)
            continue;
        int settled = found == LINE_MATCHES;
        const unsigned char *stop = p;
        while (settled && stop > start && stop[-1] == '\r')
            stop--;
        if (settled && stop - start > line_chars) {
            Py_INCREF(Py_None);
            answer = Py_None;
            goto done;
        }
        PyObject *line = NULL, *line_number = NULL, *index = NULL;
        int failed = 1;
        if (settled && count_only) {
            failed = 0;
        } else if ((line = PyUnicode_DecodeUTF8((const char *)start, stop - start,
                                                "strict")) != NULL) {
            if (count_only)
                failed = PyList_Append(unsure, line) < 0;
            else if ((line_number = PyLong_FromSsize_t(number)) != NULL
                     && (settled || (index = PyLong_FromSsize_t(PyList_Size(texts))) != NULL))
                failed = (!settled && PyList_Append(unsure, index) < 0)
                         || PyList_Append(numbers, line_number) < 0
                         || PyList_Append(texts, line) < 0;
        }
        Py_XDECREF(line);
        Py_XDECREF(line_number);
        Py_XDECREF(index);
        if (failed)
            goto done;
        if (settled)
            count++;
        if (!count_only && count >= limit)
            break;
    }
    answer = count_only ? Py_BuildValue("(nO)", count, unsure)
                        : PyTuple_Pack(3, numbers, texts, unsure);
done:
    Py_XDECREF(numbers);
    Py_XDECREF(texts);
    Py_XDECREF(unsure);
    return answer;
}

/* automaton_rows(table, prefix, names, first, codes, payloads, limit, line_chars)
 *   -> (rows, matched, binary, unsure), or None
 *
 * The rows {"path", "line", "text"} of a batch of files a regular expression's search
 * found candidate lines in, as janito_files._automaton.automaton_rows_py makes them.
 * codes[j] is the answer for the file names[first + j]; each b"m" among them has its
 * payload, in order: (the numbers of its candidate lines, those lines joined by line
 * feeds, whether it holds a NUL byte). A file's path is prefix + its name. A file with a
 * NUL byte whose lines match is binary: its payload's index is in `binary` and it has no
 * rows; `matched` counts the files with rows. A line the table cannot answer (a byte
 * past ASCII came before it matched) has its row too, its index in `unsure`: the engine
 * answers those, and the caller drops the rows of those that do not match. None, having
 * made nothing, where an unsure line ends in a carriage return or is a NUL-holding
 * file's, a line is empty, a matching or unsure line is longer than line_chars bytes, a
 * path is not UTF-8 (a lone surrogate), a file's lines and numbers differ in count, or
 * the matching and unsure lines, binary files' included, reach `limit`: the search's own
 * steps answer those. */
static PyObject *
automaton_rows(PyObject *module, PyObject *args)
{
    PyObject *table_object, *prefix, *names, *codes, *payloads;
    Py_ssize_t first, limit, line_chars;
    Table table;
    if (!PyArg_ParseTuple(args, "SUO!nSO!nn:automaton_rows", &table_object, &prefix,
                          &PyList_Type, &names, &first, &codes, &PyList_Type, &payloads,
                          &limit, &line_chars)
        || read_table(table_object, &table) < 0)
        return NULL;
    char *code_bytes;
    Py_ssize_t code_count;
    if (PyBytes_AsStringAndSize(codes, &code_bytes, &code_count) < 0)
        return NULL;
    Py_ssize_t files = PyList_Size(payloads), found_files = 0;
    for (Py_ssize_t j = 0; j < code_count; j++)
        found_files += code_bytes[j] == 'm';
    if (found_files != files || first < 0 || first + code_count > PyList_Size(names)) {
        PyErr_SetString(PyExc_ValueError, "codes, names and payloads do not agree");
        return NULL;
    }
    Rows rows;
    PyObject *binary = PyList_New(0), *unsure = PyList_New(0), *answer = NULL, *path = NULL;
    Py_ssize_t matched_files = 0, found_lines = 0; /* binary files' lines counted too */
    if (rows_open(&rows) < 0 || binary == NULL || unsure == NULL)
        goto done;
    Py_ssize_t code_at = 0;
    for (Py_ssize_t k = 0; k < files; k++, code_at++) {
        while (code_bytes[code_at] != 'm')
            code_at++;
        PyObject *payload = PyList_GetItem(payloads, k);
        PyObject *numbers = PyTuple_Check(payload) && PyTuple_Size(payload) == 3
                            ? PyTuple_GetItem(payload, 0) : NULL;
        PyObject *data = numbers != NULL ? PyTuple_GetItem(payload, 1) : NULL;
        int nul = numbers != NULL ? PyObject_IsTrue(PyTuple_GetItem(payload, 2)) : -1;
        if (numbers == NULL || !PyList_Check(numbers) || !PyBytes_Check(data) || nul < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError,
                                "a payload is (list of line numbers, bytes, NUL held)");
            goto done;
        }
        char *bytes;
        Py_ssize_t size;
        if (PyBytes_AsStringAndSize(data, &bytes, &size) < 0)
            goto done;
        const unsigned char *p = (const unsigned char *)bytes, *end = p + size;
        Py_ssize_t count = PyList_Size(numbers);
        int binary_file = 0;
        if (count == 0)
            goto python;
        Py_CLEAR(path);
        for (Py_ssize_t line = 0; line < count; line++, p++) {
            const unsigned char *start = p;
            int found = walk_line(&table, start, end, &p);
            /* an empty candidate: none has come from a search for a needed text yet */
            if ((p == end) != (line == count - 1) || p == start)
                goto python;
            if (found == LINE_MISSES)
                continue;
            /* the engine would see an unsure line's carriage return; a NUL-holding file
             * is binary or not by what the engine answers */
            if (found == LINE_UNSURE && (p[-1] == '\r' || nul))
                goto python;
            if (++found_lines >= limit) /* the search fills up in this batch */
                goto python;
            if (nul) {
                binary_file = 1;
                continue;
            }
            const unsigned char *stop = p;
            while (stop > start && stop[-1] == '\r')
                stop--;
            if (stop - start > line_chars)
                goto python;
            if (path == NULL) {
                PyObject *name = PyList_GetItem(names, first + code_at);
                if (name == NULL || !PyUnicode_Check(name)) {
                    PyErr_SetString(PyExc_TypeError, "names must be a list of str");
                    goto done;
                }
                path = PyUnicode_Concat(prefix, name);
                if (path == NULL)
                    goto done;
                if (PyUnicode_AsUTF8AndSize(path, NULL) == NULL) {
                    PyErr_Clear(); /* a name's undecodable bytes: shown as Python shows them */
                    goto python;
                }
            }
            if (found == LINE_UNSURE) {
                PyObject *index = PyLong_FromSsize_t(PyList_Size(rows.list));
                int failed = index == NULL || PyList_Append(unsure, index) < 0;
                Py_XDECREF(index);
                if (failed)
                    goto done;
            }
            if (rows_add(&rows, path, PyList_GetItem(numbers, line), (const char *)start,
                         stop - start) < 0)
                goto done;
        }
        if (binary_file) {
            PyObject *index = PyLong_FromSsize_t(k);
            if (index == NULL || PyList_Append(binary, index) < 0) {
                Py_XDECREF(index);
                goto done;
            }
            Py_DECREF(index);
        } else if (path != NULL) {
            matched_files++;
        }
    }
    answer = Py_BuildValue("(OnOO)", rows.list, matched_files, binary, unsure);
    goto done;
python:
    Py_INCREF(Py_None);
    answer = Py_None;
done:
    Py_XDECREF(path);
    rows_close(&rows, 0);
    Py_XDECREF(binary);
    Py_XDECREF(unsure);
    return answer;
}

/* ------------------------------------------------------------------ Lookahead */

/* Lookahead(after=256): opens and lists the subfolders a walk will enter next, on a thread
 * of its own that never takes the GIL, while the walk goes on with what it holds. The
 * first `after` folders handed to it are left to the walk: a small walk is over before a
 * thread pays for itself.
 *
 *   ahead(dir_fd, names, kinds)   the subfolders among the entries of the folder open as
 *     -> job, or None             dir_fd (those of kind "directory"), in the order the
 *                                 walk enters them; None when it holds none
 *   take(job, name)               (fd, device, inode, names, kinds) of subfolder `name`,
 *                                 opened and listed, or None: the walk opens and lists
 *                                 it itself (not reached yet, or it failed, so that the
 *                                 walk meets and reports the failure as it always does)
 *   drop(job)                     the walk left the folder: what was not taken is closed
 *   release(fd)                   the walk is done with folder fd: closed on the thread
 *   close()                       stop the thread, close everything
 *
 * A subfolder is opened as the walk opens one: relative to a copy of its parent's
 * descriptor, with O_NOFOLLOW and O_DIRECTORY, by a name holding no slash and neither "."
 * nor ".."; so a link or a file put in its place is never entered. Jobs form a stack: the newest (the deepest
 * folder) is served first, as a depth-first walk needs them. At most LOOKAHEAD_HELD
 * listed subfolders wait to be taken, and at most LOOKAHEAD_JOBS jobs keep a descriptor
 * of their folder: the older ones are left to the walk. */

#define LOOKAHEAD_HELD 32
#define LOOKAHEAD_AFTER 256
#define LOOKAHEAD_JOBS 8
#define LOOKAHEAD_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

enum { SLOT_PENDING, SLOT_WORKING, SLOT_DONE, SLOT_GONE };

typedef struct {
    char *name;
    int state;
    int fd;  /* SLOT_DONE: the subfolder, open */
    dev_t device;
    ino_t inode;
    Listing listing;
} Subfolder;

typedef struct AheadJob {
    struct AheadJob *below;
    long id;
    int dir_fd;        /* a copy of the folder's descriptor; -1 once no slot needs it */
    Subfolder *slots;
    size_t count;
    size_t next;       /* the first slot the thread has not looked at */
    size_t cursor;     /* where take() looks first */
    int working;       /* slots the thread is opening now */
    int dropped;
} AheadJob;

typedef struct {
    PyObject_HEAD
    pthread_mutex_t lock;
    pthread_cond_t work;      /* the thread waits here for a job or for room */
    pthread_cond_t done;      /* the walk waits here for a subfolder being opened */
    int thread_waits;
    int walk_waits;
    pthread_t thread;
    int started;
    int closing;
    AheadJob *top;
    AheadJob *dropped;      /* left by the walk while the thread was in one of their slots */
    long next_id;
    size_t held;       /* slots done and not taken */
    long folders;      /* folders handed to ahead() */
    long after;        /* folders left to the walk before the thread starts */
    int *closing_fds;  /* handed back by the walk, closed by the thread */
    size_t to_close;
    size_t close_room;
} Lookahead;

static void
slot_clear(Subfolder *slot)
{
    if (slot->state == SLOT_DONE) {
        close(slot->fd);
        listing_free(&slot->listing);
    }
    slot->state = SLOT_GONE;
}

static void
job_free(AheadJob *job)
{
    for (size_t k = 0; k < job->count; k++) {
        slot_clear(&job->slots[k]);
        free(job->slots[k].name);
    }
    if (job->dir_fd >= 0)
        close(job->dir_fd);
    free(job->slots);
    free(job);
}

/* Close the job's copy of its folder once no slot will be opened from it. Lock held. */
static void
job_settle(AheadJob *job)
{
    if (job->dir_fd >= 0 && job->next >= job->count && job->working == 0) {
        close(job->dir_fd);
        job->dir_fd = -1;
    }
}

/* The job the thread serves next: the newest with a slot not looked at. Lock held. */
static AheadJob *
next_job(Lookahead *self)
{
    for (AheadJob *job = self->top; job != NULL; job = job->below)
        if (job->next < job->count && job->dir_fd >= 0)
            return job;
    return NULL;
}

static void *
lookahead_work(void *argument)
{
    Lookahead *self = argument;
    pthread_mutex_lock(&self->lock);
    while (!self->closing) {
        if (self->to_close) {
            /* the walk is done with these folders: the kernel's clean-up of each (its
             * directory index) is paid here rather than on the walk's thread */
            int fd = self->closing_fds[--self->to_close];
            pthread_mutex_unlock(&self->lock);
            close(fd);
            pthread_mutex_lock(&self->lock);
            continue;
        }
        AheadJob *job = self->held < LOOKAHEAD_HELD ? next_job(self) : NULL;
        if (job == NULL) {
            self->thread_waits = 1;
            pthread_cond_wait(&self->work, &self->lock);
            self->thread_waits = 0;
            continue;
        }
        Subfolder *slot = &job->slots[job->next++];
        if (slot->state != SLOT_PENDING) {
            job_settle(job);
            continue;
        }
        slot->state = SLOT_WORKING;
        job->working++;
        int dir_fd = job->dir_fd;
        pthread_mutex_unlock(&self->lock);

        Listing listing = {0};
        struct stat info;
        int failed = 0;
        int fd = openat(dir_fd, slot->name, LOOKAHEAD_FLAGS);
        if (fd < 0)
            failed = 1;
        else if (fstat(fd, &info) != 0 || read_folder(fd, &listing) != 0) {
            close(fd);
            failed = 1;
        }

        pthread_mutex_lock(&self->lock);
        job->working--;
        if (failed || job->dropped || self->closing) {
            if (!failed) {
                close(fd);
                listing_free(&listing);
            }
            slot->state = SLOT_GONE;  /* the walk opens it itself and meets the failure */
        } else {
            slot->fd = fd;
            slot->device = info.st_dev;
            slot->inode = info.st_ino;
            slot->listing = listing;
            slot->state = SLOT_DONE;
            self->held++;
        }
        job_settle(job);
        if (job->dropped && job->working == 0) {
            /* unlink it from the list of dropped jobs and let it go */
            for (AheadJob **at = &self->dropped; *at != NULL; at = &(*at)->below) {
                if (*at == job) {
                    *at = job->below;
                    break;
                }
            }
            job_free(job);
        }
        if (self->walk_waits)
            pthread_cond_signal(&self->done);
    }
    pthread_mutex_unlock(&self->lock);
    return NULL;
}

static AheadJob *
find_job(Lookahead *self, long id)
{
    for (AheadJob *job = self->top; job != NULL; job = job->below)
        if (job->id == id)
            return job;
    return NULL;
}

static PyObject *
lookahead_ahead(PyObject *object, PyObject *args)
{
    Lookahead *self = (Lookahead *)object;
    int dir_fd;
    PyObject *names, *kinds;
    if (!PyArg_ParseTuple(args, "iO!O!:ahead", &dir_fd, &PyList_Type, &names, &PyList_Type,
                          &kinds))
        return NULL;
    if (self->closing) {
        PyErr_SetString(PyExc_ValueError, "the lookahead is closed");
        return NULL;
    }
    if (PyList_Size(kinds) != PyList_Size(names)) {
        PyErr_SetString(PyExc_ValueError, "names and kinds differ in length");
        return NULL;
    }
    if (++self->folders <= self->after)
        RETURN_NONE;
    PyObject *directory = PyUnicode_InternFromString("directory");
    if (directory == NULL)
        return NULL;
    Py_ssize_t listed = PyList_Size(names), count = 0;
    for (Py_ssize_t k = 0; k < listed; k++) {
        PyObject *kind = PyList_GetItem(kinds, k);
        if (kind == directory || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, directory) == 0))
            count++;
    }
    if (count == 0) {
        Py_DECREF(directory);
        RETURN_NONE;
    }
    AheadJob *job = calloc(1, sizeof(AheadJob));
    Subfolder *slots = count ? calloc((size_t)count, sizeof(Subfolder)) : NULL;
    if (job == NULL || (count && slots == NULL)) {
        free(job);
        free(slots);
        Py_DECREF(directory);
        return PyErr_NoMemory();
    }
    job->slots = slots;
    job->dir_fd = -1;
    for (Py_ssize_t at = 0, k = 0; at < listed; at++) {
        PyObject *kind = PyList_GetItem(kinds, at);
        if (!(kind == directory
              || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, directory) == 0)))
            continue;
        PyObject *encoded = PyUnicode_EncodeFSDefault(PyList_GetItem(names, at));
        char *bytes;
        Py_ssize_t size;
        if (encoded == NULL || PyBytes_AsStringAndSize(encoded, &bytes, &size) < 0) {
            Py_XDECREF(encoded);
            job->count = (size_t)k;
            job_free(job);
            Py_DECREF(directory);
            return NULL;
        }
        slots[k].name = malloc((size_t)size + 1);
        if (slots[k].name != NULL)
            memcpy(slots[k].name, bytes, (size_t)size + 1);
        /* a name that could leave the folder is never opened here: the walk decides */
        slots[k].state = slots[k].name == NULL || size == 0 || memchr(bytes, '/', (size_t)size)
                         || strlen(bytes) != (size_t)size || strcmp(bytes, ".") == 0
                         || strcmp(bytes, "..") == 0 ? SLOT_GONE : SLOT_PENDING;
        slots[k].fd = -1;
        Py_DECREF(encoded);
        k++;
    }
    Py_DECREF(directory);
    job->count = (size_t)count;
    job->dir_fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
    if (job->dir_fd < 0) {
        job_free(job);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if (!self->started) {
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 256 * 1024);
        int failed = pthread_create(&self->thread, &attributes, lookahead_work, self);
        pthread_attr_destroy(&attributes);
        if (failed) {
            job_free(job);
            errno = failed;
            return PyErr_SetFromErrno(PyExc_OSError);
        }
        self->started = 1;
    }
    pthread_mutex_lock(&self->lock);
    job->id = ++self->next_id;
    job->below = self->top;
    self->top = job;
    /* the oldest jobs with work left are left to the walk: a deep tree keeps few copies */
    int live = 0;
    for (AheadJob *older = self->top; older != NULL; older = older->below) {
        if (older->dir_fd < 0)
            continue;
        if (++live > LOOKAHEAD_JOBS) {
            older->next = older->count;
            job_settle(older);
        }
    }
    long id = job->id;
    if (self->thread_waits)
        pthread_cond_signal(&self->work);
    pthread_mutex_unlock(&self->lock);
    return PyLong_FromLong(id);
}

static PyObject *
lookahead_take(PyObject *object, PyObject *args)
{
    Lookahead *self = (Lookahead *)object;
    long id;
    PyObject *name_object;
    if (!PyArg_ParseTuple(args, "lU:take", &id, &name_object))
        return NULL;
    PyObject *encoded = PyUnicode_EncodeFSDefault(name_object);
    if (encoded == NULL)
        return NULL;
    const char *name = PyBytes_AsString(encoded);
    if (name == NULL) {
        Py_DECREF(encoded);
        return NULL;
    }
    Subfolder taken = {0};
    int found = 0;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&self->lock);
    AheadJob *job = find_job(self, id);
    Subfolder *slot = NULL;
    if (job != NULL) {
        for (size_t k = job->cursor; k < job->count; k++) {
            if (job->slots[k].name != NULL && strcmp(job->slots[k].name, name) == 0) {
                slot = &job->slots[k];
                job->cursor = k + 1;
                break;
            }
        }
    }
    if (slot != NULL && slot->state == SLOT_WORKING) {
        /* The walk caught up with the thread: it lists the next subfolder not started
         * itself, so that the two list at once instead of the walk waiting on each. */
        for (size_t k = job->cursor; k < job->count; k++) {
            if (job->slots[k].state == SLOT_PENDING) {
                job->slots[k].state = SLOT_GONE;
                break;
            }
        }
    }
    while (slot != NULL && slot->state == SLOT_WORKING) {
        self->walk_waits = 1;
        pthread_cond_wait(&self->done, &self->lock);
        self->walk_waits = 0;
    }
    if (slot != NULL) {
        if (slot->state == SLOT_DONE) {
            taken = *slot;
            slot->listing = (Listing){0};
            slot->state = SLOT_GONE;
            if (self->held-- == LOOKAHEAD_HELD && self->thread_waits)
                pthread_cond_signal(&self->work);  /* room again */
            found = 1;
        } else {
            slot->state = SLOT_GONE;  /* not reached: the walk opens it now */
        }
    }
    pthread_mutex_unlock(&self->lock);
    Py_END_ALLOW_THREADS
    Py_DECREF(encoded);
    if (!found)
        RETURN_NONE;
    PyObject *listed = listing_answer(&taken.listing);
    listing_free(&taken.listing);
    if (listed == NULL) {
        close(taken.fd);
        return NULL;
    }
    PyObject *answer = Py_BuildValue("(iKKOO)", taken.fd, (unsigned long long)taken.device,
                                     (unsigned long long)taken.inode,
                                     PyTuple_GetItem(listed, 0), PyTuple_GetItem(listed, 1));
    Py_DECREF(listed);
    if (answer == NULL)
        close(taken.fd);
    return answer;
}

static PyObject *
lookahead_drop(PyObject *object, PyObject *arg)
{
    Lookahead *self = (Lookahead *)object;
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    pthread_mutex_lock(&self->lock);
    for (AheadJob **at = &self->top; *at != NULL; at = &(*at)->below) {
        AheadJob *job = *at;
        if (job->id != id)
            continue;
        *at = job->below;
        for (size_t k = 0; k < job->count; k++) {
            if (job->slots[k].state == SLOT_DONE)
                self->held--;
            if (job->slots[k].state != SLOT_WORKING)
                slot_clear(&job->slots[k]);
        }
        job->next = job->count;
        if (job->working) {  /* the thread lets it go when it comes back */
            job->dropped = 1;
            job->below = self->dropped;
            self->dropped = job;
        } else {
            job_free(job);
        }
        if (self->thread_waits)
            pthread_cond_signal(&self->work);
        break;
    }
    pthread_mutex_unlock(&self->lock);
    RETURN_NONE;
}

/* release(fd): the walk is done with folder descriptor fd, which this closes (on its
 * thread once it runs: closing a folder the kernel indexed costs the closer). */
static PyObject *
lookahead_release(PyObject *object, PyObject *arg)
{
    Lookahead *self = (Lookahead *)object;
    long fd = PyLong_AsLong(arg);
    if (fd == -1 && PyErr_Occurred())
        return NULL;
    if (fd < 0 || fd > INT_MAX) {
        errno = EBADF;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    pthread_mutex_lock(&self->lock);
    int queued = 0;
    if (self->started && !self->closing) {
        if (self->to_close == self->close_room) {
            size_t room = self->close_room ? self->close_room * 2 : 64;
            int *more = realloc(self->closing_fds, room * sizeof(int));
            if (more != NULL) {
                self->closing_fds = more;
                self->close_room = room;
            }
        }
        if (self->to_close < self->close_room) {
            self->closing_fds[self->to_close++] = (int)fd;
            queued = 1;
            if (self->thread_waits)
                pthread_cond_signal(&self->work);
        }
    }
    pthread_mutex_unlock(&self->lock);
    if (!queued)
        close((int)fd);
    RETURN_NONE;
}

static void
lookahead_stop(Lookahead *self)
{
    if (self->started) {
        pthread_mutex_lock(&self->lock);
        self->closing = 1;
        pthread_cond_signal(&self->work);
        pthread_mutex_unlock(&self->lock);
        Py_BEGIN_ALLOW_THREADS
        pthread_join(self->thread, NULL);
        Py_END_ALLOW_THREADS
        self->started = 0;
    }
    self->closing = 1;
    while (self->top != NULL) {
        AheadJob *job = self->top;
        self->top = job->below;
        job_free(job);
    }
    while (self->dropped != NULL) {
        AheadJob *job = self->dropped;
        self->dropped = job->below;
        job_free(job);
    }
    self->held = 0;
    while (self->to_close)
        close(self->closing_fds[--self->to_close]);
    free(self->closing_fds);
    self->closing_fds = NULL;
    self->close_room = 0;
}

static PyObject *
lookahead_close(PyObject *object, PyObject *Py_UNUSED(ignored))
{
    lookahead_stop((Lookahead *)object);
    RETURN_NONE;
}

static PyObject *
lookahead_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *keywords[] = {"after", NULL};
    long after = LOOKAHEAD_AFTER;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|l:Lookahead", keywords, &after))
        return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    Lookahead *self = (Lookahead *)alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->after = after;
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->work, NULL);
    pthread_cond_init(&self->done, NULL);
    return (PyObject *)self;
}

static void
lookahead_dealloc(PyObject *object)
{
    Lookahead *self = (Lookahead *)object;
    PyTypeObject *type = Py_TYPE(object);
    lookahead_stop(self);
    pthread_cond_destroy(&self->work);
    pthread_cond_destroy(&self->done);
    pthread_mutex_destroy(&self->lock);
    freefunc tp_free = (freefunc)PyType_GetSlot(type, Py_tp_free);
    tp_free(object);
    Py_DECREF(type);
}

static PyMethodDef lookahead_methods[] = {
    {"ahead", lookahead_ahead, METH_VARARGS,
     "ahead(dir_fd, names, kinds) -> job or None: open and list the subfolders ahead"},
    {"take", lookahead_take, METH_VARARGS,
     "take(job, name) -> (fd, device, inode, names, kinds), or None: the walk opens it"},
    {"drop", lookahead_drop, METH_O, "drop(job): close what the walk did not take"},
    {"release", lookahead_release, METH_O,
     "release(fd): close folder descriptor fd, which the walk is done with, on the thread"},
    {"close", lookahead_close, METH_NOARGS, "close(): stop the thread, close everything"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot lookahead_slots[] = {
    {Py_tp_doc, "Lookahead(after=256): the next subfolders of a walk, opened and listed ahead "
                "once `after` folders were handed to it"},
    {Py_tp_new, lookahead_new},
    {Py_tp_dealloc, lookahead_dealloc},
    {Py_tp_methods, lookahead_methods},
    {0, NULL},
};

static PyType_Spec lookahead_spec = {
    "janito_files._speedups.Lookahead", sizeof(Lookahead), 0, Py_TPFLAGS_DEFAULT,
    lookahead_slots,
};

static int
add_type(PyObject *module, PyType_Spec *spec, const char *name)
{
    PyObject *type = PyType_FromSpec(spec);
    if (type == NULL)
        return -1;
    if (PyModule_AddObject(module, name, type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

static int
add_types(PyObject *module)
{
    if (add_type(module, &searcher_spec, "Searcher") < 0)
        return -1;
    return add_type(module, &lookahead_spec, "Lookahead");
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, add_types},
    {0, NULL},
};

static PyMethodDef methods[] = {
    {"literal_lines", literal_lines, METH_VARARGS,
     "literal_lines(hay, data, needle, limit) -> (line numbers, lines joined by line feeds)"},
    {"read_searchable_at", read_searchable_at, METH_VARARGS,
     "read_searchable_at(dir_fd, name, sniff, most) -> the bytes to search, or None when "
     "the file holds more than most bytes"},
    {"pick_plain", pick_plain, METH_VARARGS,
     "pick_plain(names, kinds, kind, how, start, end) -> the names a plain glob picks"},
    {"prefixed", prefixed, METH_VARARGS, "prefixed(prefix, names) -> [prefix + name, ...]"},
    {"automaton_lines", automaton_lines, METH_VARARGS,
     "automaton_lines(table, text, pos, limit, line_chars, count_only) -> the lines of a "
     "text an automaton's table matches, those it leaves to the engine, or None"},
    {"automaton_rows", automaton_rows, METH_VARARGS,
     "automaton_rows(table, prefix, names, first, codes, payloads, limit, line_chars) -> "
     "(rows, files matched, binary files, unsure rows) of a batch a regular expression's "
     "table answers, or None"},
    {"found_rows", found_rows, METH_VARARGS,
     "found_rows(paths, payloads, line_chars) -> the rows of a literal search's found "
     "files, or None where Python's steps must make them"},
    {"list_folder", list_folder, METH_O,
     "list_folder(fd) -> (names, kinds): the entries of the folder open as fd, names sorted"},
    {"scan_files", scan_files, METH_VARARGS,
     "scan_files(dir_fd, names, sniff, most, needle, fold, limit, count_only, mode, budget, "
     "table=None)"
     " -> (codes, payloads): the files of one folder read and searched as a batch"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "janito_files._speedups",
    "The compiled per-file steps of SearchText and SearchRegex.", 0, methods,
    module_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
#ifdef HAVE_PAIRS
    __builtin_cpu_init();
    has_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModuleDef_Init(&module);
}
