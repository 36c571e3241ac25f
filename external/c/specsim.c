/*
 * specsim.c - a C client of specsim's external-implementation protocol.
 * The API is documented in specsim.h; the protocol in docs/external.md and
 * external/doc.go. C99 and its standard library only.
 */
#include "specsim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Bounds on what the harness may send: a header line, a .npy header, the
 * elements of one array, the arrays of one message, JSON nesting. */
#define MAX_LINE (1 << 20)
#define MAX_NPY_HEADER 4096
#define MAX_ELEMS ((size_t)1 << 30)
#define MAX_ARRAYS 16
#define MAX_DEPTH 16

/* ---------------------------------------------------------------- rng */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static void rng_seed(specsim_rng *r, uint64_t seed)
{
    int i;
    for (i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
    r->scripted = 0;
    r->value = 0;
}

double specsim_random(specsim_rng *r)
{
    uint64_t *s = r->s, out, t;
    if (r->scripted)
        return r->value;
    out = rotl(s[1] * 5, 7) * 9;
    t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(out >> 11) * (1.0 / 9007199254740992.0);
}

/* ---------------------------------------------------------------- errors */

/* fail prints one line, "specsim: ...", on stderr and returns -1; control
 * bytes of the message (from the input it quotes) become '?', so the
 * line stays one line. */
static int fail(const char *fmt, ...)
{
    char msg[1024];
    size_t k;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (k = 0; msg[k] != '\0'; k++)
        if ((unsigned char)msg[k] < 0x20 || msg[k] == 0x7f) msg[k] = '?';
    fprintf(stderr, "specsim: %s\n", msg);
    return -1;
}

/* quote copies at most 120 bytes of s (n bytes long) into dst for an
 * error line: control bytes become '?', trailing blanks are dropped, so
 * the message stays one line whatever the input held. */
static const char *quote(const char *s, size_t n, char dst[121])
{
    size_t k;
    for (k = 0; k < n && k < 120; k++)
        dst[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
    while (k > 0 && (dst[k - 1] == ' ' || dst[k - 1] == '?')) k--;
    dst[k] = '\0';
    return dst;
}

/* ---------------------------------------------------------------- JSON */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

/* jnode is one JSON value of a header; strings (keys too) are decoded in
 * place in the line buffer and NUL-terminated; children are linked by
 * index (first, next; -1 ends). */
typedef struct jnode {
    int type, truth, first, next;
    const char *key; /* the member name, inside an object */
    const char *text; /* a string's value or a number's literal */
} jnode;

typedef struct jparser {
    char *s;
    size_t pos, len;
    jnode *nodes;
    int n, cap;
    const char *err;
} jparser;

static void skip_ws(jparser *j)
{
    while (j->pos < j->len && (j->s[j->pos] == ' ' || j->s[j->pos] == '\t' || j->s[j->pos] == '\r' || j->s[j->pos] == '\n'))
        j->pos++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* put_utf8 encodes code point c at dst and returns the bytes written. */
static size_t put_utf8(char *dst, unsigned long c)
{
    if (c < 0x80) { dst[0] = (char)c; return 1; }
    if (c < 0x800) { dst[0] = (char)(0xc0 | (c >> 6)); dst[1] = (char)(0x80 | (c & 0x3f)); return 2; }
    dst[0] = (char)(0xe0 | (c >> 12));
    dst[1] = (char)(0x80 | ((c >> 6) & 0x3f));
    dst[2] = (char)(0x80 | (c & 0x3f));
    return 3;
}

/* parse_string decodes the string at j->pos (its opening quote) in place
 * and returns it, NUL-terminated, or NULL. (\u escapes are decoded one
 * code unit at a time; the protocol's strings are ASCII.) */
static const char *parse_string(jparser *j)
{
    char *out = j->s + j->pos + 1, *start = out;
    size_t i = j->pos + 1;
    while (i < j->len && j->s[i] != '"') {
        char c = j->s[i++];
        if ((unsigned char)c < 0x20) { j->err = "a control character inside a string"; return NULL; }
        if (c != '\\') { *out++ = c; continue; }
        if (i >= j->len) break;
        c = j->s[i++];
        switch (c) {
        case '"': case '\\': case '/': *out++ = c; break;
        case 'b': *out++ = '\b'; break;
        case 'f': *out++ = '\f'; break;
        case 'n': *out++ = '\n'; break;
        case 'r': *out++ = '\r'; break;
        case 't': *out++ = '\t'; break;
        case 'u': {
            unsigned long cp = 0;
            int k, h;
            for (k = 0; k < 4; k++) {
                if (i >= j->len || (h = hexval(j->s[i])) < 0) { j->err = "a bad \\u escape"; return NULL; }
                cp = cp * 16 + (unsigned long)h;
                i++;
            }
            out += put_utf8(out, cp);
            break;
        }
        default: j->err = "a bad escape in a string"; return NULL;
        }
    }
    if (i >= j->len) { j->err = "an unterminated string"; return NULL; }
    *out = '\0'; /* out <= s + i: the closing quote is overwritten at most */
    j->pos = i + 1;
    return start;
}

static int parse_value(jparser *j, int depth);

static int new_node(jparser *j, int type)
{
    jnode *n;
    if (j->n >= j->cap) { j->err = "too many values"; return -1; }
    n = &j->nodes[j->n];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->first = n->next = -1;
    return j->n++;
}

/* parse_number checks a JSON number's grammar; its literal stays in the
 * line, unterminated (num_text copies it out). */
static int parse_number(jparser *j, int id)
{
    size_t i = j->pos;
    const char *s = j->s;
    if (i < j->len && s[i] == '-') i++;
    if (i >= j->len || s[i] < '0' || s[i] > '9') { j->err = "a bad number"; return -1; }
    while (i < j->len && s[i] >= '0' && s[i] <= '9') i++;
    if (i < j->len && s[i] == '.') {
        i++;
        if (i >= j->len || s[i] < '0' || s[i] > '9') { j->err = "a bad number"; return -1; }
        while (i < j->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    if (i < j->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < j->len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= j->len || s[i] < '0' || s[i] > '9') { j->err = "a bad number"; return -1; }
        while (i < j->len && s[i] >= '0' && s[i] <= '9') i++;
    }
    j->nodes[id].text = s + j->pos;
    j->pos = i;
    return id;
}

/* parse_members parses an object's members or an array's elements (after
 * the opening bracket) up to close. */
static int parse_members(jparser *j, int id, int depth, char close)
{
    int last = -1, child;
    const char *key = NULL;
    skip_ws(j);
    if (j->pos < j->len && j->s[j->pos] == close) { j->pos++; return id; }
    for (;;) {
        skip_ws(j);
        if (close == '}') {
            if (j->pos >= j->len || j->s[j->pos] != '"') { j->err = "an object key that is not a string"; return -1; }
            if ((key = parse_string(j)) == NULL) return -1;
            skip_ws(j);
            if (j->pos >= j->len || j->s[j->pos] != ':') { j->err = "a missing ':'"; return -1; }
            j->pos++;
        }
        if ((child = parse_value(j, depth + 1)) < 0) return -1;
        j->nodes[child].key = key;
        if (last < 0) j->nodes[id].first = child; else j->nodes[last].next = child;
        last = child;
        skip_ws(j);
        if (j->pos < j->len && j->s[j->pos] == ',') { j->pos++; continue; }
        if (j->pos < j->len && j->s[j->pos] == close) { j->pos++; return id; }
        j->err = close == '}' ? "a missing ',' or '}'" : "a missing ',' or ']'";
        return -1;
    }
}

static int parse_literal(jparser *j, const char *word, int type, int truth)
{
    size_t n = strlen(word);
    int id;
    if (j->len - j->pos < n || strncmp(j->s + j->pos, word, n) != 0) { j->err = "an unexpected character"; return -1; }
    if ((id = new_node(j, type)) < 0) return -1;
    j->nodes[id].truth = truth;
    j->pos += n;
    return id;
}

static int parse_value(jparser *j, int depth)
{
    int id;
    char c;
    if (depth > MAX_DEPTH) { j->err = "nesting too deep"; return -1; }
    skip_ws(j);
    if (j->pos >= j->len) { j->err = "a missing value"; return -1; }
    c = j->s[j->pos];
    switch (c) {
    case '{': case '[':
        if ((id = new_node(j, c == '{' ? J_OBJ : J_ARR)) < 0) return -1;
        j->pos++;
        return parse_members(j, id, depth, c == '{' ? '}' : ']');
    case '"':
        if ((id = new_node(j, J_STR)) < 0) return -1;
        j->nodes[id].text = parse_string(j);
        return j->nodes[id].text ? id : -1;
    case 't': return parse_literal(j, "true", J_BOOL, 1);
    case 'f': return parse_literal(j, "false", J_BOOL, 0);
    case 'n': return parse_literal(j, "null", J_NULL, 0);
    default:
        if ((id = new_node(j, J_NUM)) < 0) return -1;
        return parse_number(j, id);
    }
}

/* json_parse parses line (len bytes, modified in place) as one JSON
 * object into j's nodes; the root is node 0. Numbers' literals stay
 * inside the line: num_* below copy them out before converting. */
static int json_parse(jparser *j, char *line, size_t len)
{
    int need = (int)len + 2;
    j->s = line;
    j->pos = 0;
    j->len = len;
    j->n = 0;
    j->err = NULL;
    if (need > j->cap) {
        jnode *nn = (jnode *)realloc(j->nodes, (size_t)need * sizeof *nn);
        if (nn == NULL) return fail("out of memory for a header of %lu bytes", (unsigned long)len);
        j->nodes = nn;
        j->cap = need;
    }
    skip_ws(j);
    if (j->pos >= j->len || j->s[j->pos] != '{' || parse_value(j, 0) < 0) {
        char q[121];
        return fail("the header line is not a JSON object (%s at byte %lu): %s", j->err ? j->err : "no '{'",
                    (unsigned long)j->pos, quote(line, len, q));
    }
    skip_ws(j);
    if (j->pos != j->len) return fail("the header line has bytes after its JSON object, at byte %lu", (unsigned long)j->pos);
    return 0;
}

/* member returns the member of object node id named key, or NULL. */
static const jnode *member(const jparser *j, int id, const char *key)
{
    int c;
    for (c = j->nodes[id].first; c >= 0; c = j->nodes[c].next)
        if (j->nodes[c].key && strcmp(j->nodes[c].key, key) == 0) return &j->nodes[c];
    return NULL;
}

/* num_text copies a number node's literal into buf (NUL-terminated). */
static const char *num_text(const jnode *n, char *buf, size_t size)
{
    size_t k = 0;
    const char *t = n->text;
    while (k + 1 < size && (t[k] == '-' || t[k] == '+' || t[k] == '.' || t[k] == 'e' || t[k] == 'E' || (t[k] >= '0' && t[k] <= '9'))) {
        buf[k] = t[k];
        k++;
    }
    buf[k] = '\0';
    return buf;
}

/* get_int reads member key of the root as an integer in [lo, hi]; absent
 * members give def when optional. */
static int get_int(const jparser *j, const char *key, int64_t lo, int64_t hi, int optional, int64_t def, int64_t *out)
{
    const jnode *n = member(j, 0, key);
    char buf[40], *end;
    long long v;
    if (n == NULL || n->type == J_NULL) {
        if (!optional) return fail("the header has no \"%s\" field", key);
        *out = def;
        return 0;
    }
    if (n->type != J_NUM) return fail("the header's \"%s\" is not a number", key);
    errno = 0;
    v = strtoll(num_text(n, buf, sizeof buf), &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi) return fail("the header's \"%s\" = %s is not an integer in [%lld, %lld]", key, buf, (long long)lo, (long long)hi);
    *out = (int64_t)v;
    return 0;
}

/* get_str returns member key of the root as a string, or def. */
static const char *get_str(const jparser *j, const char *key, const char *def)
{
    const jnode *n = member(j, 0, key);
    return n && n->type == J_STR ? n->text : def;
}

/* ---------------------------------------------------------------- I/O */

/* read_full reads exactly n bytes, or fails naming what was being read. */
static int read_full(FILE *in, void *dst, size_t n, const char *what)
{
    if (n > 0 && fread(dst, 1, n, in) != n) {
        if (ferror(in)) return fail("reading %s: %s", what, strerror(errno));
        return fail("the input ended inside %s", what);
    }
    return 0;
}

/* read_line reads one header line (without its '\n') into *buf, growing
 * it; it returns the length, -2 at a clean end of input, -1 on error. */
static long read_line(FILE *in, char **buf, size_t *cap)
{
    size_t n = 0;
    int c;
    if (*cap == 0) {
        if ((*buf = (char *)malloc(4096)) == NULL) return fail("out of memory reading a header line");
        *cap = 4096;
    }
    while ((c = getc(in)) != EOF && c != '\n') {
        if (n + 1 >= *cap) {
            size_t nc = *cap * 2;
            char *nb;
            if (nc > MAX_LINE + 1) return fail("a header line longer than %d bytes", MAX_LINE);
            if ((nb = (char *)realloc(*buf, nc)) == NULL) return fail("out of memory reading a header line");
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)c;
    }
    if (c == EOF) {
        if (ferror(in)) return fail("reading a header line: %s", strerror(errno));
        if (n == 0) return -2;
        return fail("the input ended inside a header line");
    }
    (*buf)[n] = '\0';
    return (long)n;
}

static uint64_t le64(const unsigned char *b)
{
    uint64_t v = 0;
    int k;
    for (k = 7; k >= 0; k--) v = (v << 8) | b[k];
    return v;
}

static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* slot is an array's storage, reused from message to message. */
typedef struct slot {
    specsim_array a;
    void *data;
    size_t cap;
} slot;

/* npy_header parses the dict literal of a .npy v1.0 header into a's
 * descr and shape. */
static int npy_header(const char *h, specsim_array *a, const char *name)
{
    const char *d = strstr(h, "'descr'"), *f = strstr(h, "'fortran_order'"), *s = strstr(h, "'shape'");
    const char *q;
    char *end, hq[121];
    size_t n;
    if (d == NULL || f == NULL || s == NULL) return fail("array \"%s\": a malformed .npy header (no descr, fortran_order or shape): %s", name, quote(h, strlen(h), hq));
    d = strchr(d + 7, '\'');
    q = d ? strchr(d + 1, '\'') : NULL;
    if (q == NULL || (size_t)(q - d - 1) >= sizeof a->descr) return fail("array \"%s\": a malformed .npy descr: %s", name, quote(h, strlen(h), hq));
    memcpy(a->descr, d + 1, (size_t)(q - d - 1));
    a->descr[q - d - 1] = '\0';
    f = strchr(f + 15, ':');
    while (f && (*++f == ' '))
        ;
    if (f == NULL || strncmp(f, "False", 5) != 0) return fail("array \"%s\": a Fortran-order or malformed .npy frame; send C order", name);
    s = strchr(s + 7, '(');
    if (s == NULL) return fail("array \"%s\": a .npy header without a shape tuple: %s", name, quote(h, strlen(h), hq));
    a->ndim = 0;
    n = 1;
    for (s++;;) {
        long long v;
        while (*s == ' ') s++;
        if (*s == ')') break;
        if (a->ndim == 4) return fail("array \"%s\" has more than 4 dimensions", name);
        errno = 0;
        v = strtoll(s, &end, 10);
        if (end == s || errno != 0 || v < 0) return fail("array \"%s\": a bad .npy shape entry: %s", name, quote(h, strlen(h), hq));
        if (v > 0 && n > MAX_ELEMS / (size_t)v) return fail("array \"%s\" has more than %lu elements", name, (unsigned long)MAX_ELEMS);
        n *= (size_t)v;
        a->shape[a->ndim++] = (int64_t)v;
        s = end;
        while (*s == ' ') s++;
        if (*s == ',') s++;
        else if (*s != ')') return fail("array \"%s\": a bad .npy shape: %s", name, quote(h, strlen(h), hq));
    }
    a->n = n;
    return 0;
}

/* convert decodes n little-endian items of the frame's dtype in place. */
static void convert(slot *sl)
{
    unsigned char *b = (unsigned char *)sl->data;
    size_t i;
    specsim_array *a = &sl->a;
    a->f32 = NULL;
    a->f64 = NULL;
    a->i64 = NULL;
    if (strcmp(a->descr, "<f4") == 0) {
        float *f = (float *)sl->data;
        for (i = 0; i < a->n; i++) {
            uint32_t u = le32(b + 4 * i);
            memcpy(&f[i], &u, 4);
        }
        a->f32 = f;
    } else if (strcmp(a->descr, "<f8") == 0) {
        double *f = (double *)sl->data;
        for (i = 0; i < a->n; i++) {
            uint64_t u = le64(b + 8 * i);
            memcpy(&f[i], &u, 8);
        }
        a->f64 = f;
    } else {
        int64_t *v = (int64_t *)sl->data;
        for (i = 0; i < a->n; i++) {
            uint64_t u = le64(b + 8 * i);
            memcpy(&v[i], &u, 8);
        }
        a->i64 = v;
    }
}

/* read_npy reads one .npy v1.0 frame named name into sl. */
static int read_npy(FILE *in, slot *sl, const char *name)
{
    unsigned char pre[10];
    char h[MAX_NPY_HEADER + 1];
    size_t hl, size;
    strncpy(sl->a.name, name, sizeof sl->a.name - 1);
    sl->a.name[sizeof sl->a.name - 1] = '\0';
    if (read_full(in, pre, 10, "a .npy frame's preamble") < 0) return -1;
    if (memcmp(pre, "\x93NUMPY", 6) != 0) return fail("array \"%s\" is not a .npy frame (it starts with bytes %02x %02x %02x %02x)", name, pre[0], pre[1], pre[2], pre[3]);
    if (pre[6] != 1 || pre[7] != 0) return fail("array \"%s\": .npy format version %d.%d; the protocol uses 1.0", name, pre[6], pre[7]);
    hl = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (hl > MAX_NPY_HEADER) return fail("array \"%s\": a .npy header of %lu bytes (at most %d)", name, (unsigned long)hl, MAX_NPY_HEADER);
    if (read_full(in, h, hl, "a .npy header") < 0) return -1;
    h[hl] = '\0';
    if (npy_header(h, &sl->a, name) < 0) return -1;
    if (strcmp(sl->a.descr, "<f4") == 0) size = 4;
    else if (strcmp(sl->a.descr, "<f8") == 0 || strcmp(sl->a.descr, "<i8") == 0) size = 8;
    else return fail("array \"%s\" has dtype %s; the protocol sends <f4, <f8 and <i8", name, sl->a.descr);
    if (sl->a.n * size > sl->cap) {
        void *nd = realloc(sl->data, sl->a.n * size);
        if (nd == NULL) return fail("out of memory for array \"%s\" (%lu bytes)", name, (unsigned long)(sl->a.n * size));
        sl->data = nd;
        sl->cap = sl->a.n * size;
    }
    if (read_full(in, sl->data, sl->a.n * size, "a .npy frame's data") < 0) return -1;
    convert(sl);
    return 0;
}

/* write_i64 writes an int64 frame of shape [rows, cols]. */
static int write_i64(FILE *out, const int64_t *x, int rows, int cols)
{
    char h[128];
    unsigned char b[8];
    int n, total, pad, k;
    size_t i, count = (size_t)rows * (size_t)cols;
    n = sprintf(h, "{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols);
    total = 10 + n + 1;
    pad = (64 - total % 64) % 64;
    memset(h + n, ' ', (size_t)pad);
    h[n + pad] = '\n';
    n += pad + 1;
    fwrite("\x93NUMPY\x01\x00", 1, 8, out);
    fputc(n & 0xff, out);
    fputc(n >> 8, out);
    fwrite(h, 1, (size_t)n, out);
    for (i = 0; i < count; i++) {
        uint64_t u = (uint64_t)x[i];
        for (k = 0; k < 8; k++) b[k] = (unsigned char)(u >> (8 * k));
        if (fwrite(b, 1, 8, out) != 8) return fail("writing a reply: %s", strerror(errno));
    }
    return 0;
}

/* write_json_string writes s as a JSON string literal. */
static void write_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

static int flush(FILE *out)
{
    if (fflush(out) != 0 || ferror(out)) return fail("writing a reply: %s", strerror(errno));
    return 0;
}

static int send_error(FILE *out, int batch, const char *msg)
{
    fprintf(out, "{\"op\":\"error\",\"batch\":%d,\"arrays\":[],\"message\":", batch);
    write_json_string(out, msg);
    fputs("}\n", out);
    return flush(out);
}

/* ---------------------------------------------------------------- session */

/* session is the state of one conversation with the harness. */
typedef struct session {
    const specsim_impl *impl;
    FILE *in, *out;
    jparser j;
    char *line;
    size_t cap;
    char mode[8];
    int protocol, gamma, vocab, contexts, have_sampling;
    specsim_sampling sampling;
    slot pool[2]; /* p, q */
    slot arr[MAX_ARRAYS];
    specsim_array view[MAX_ARRAYS];
    int64_t *emitted, *drafts;
    size_t reply_cap;
    specsim_rng rng, row_rng;
} session;

/* impl_name is the implementation's name, "c-client" when it has none. */
static const char *impl_name(const specsim_impl *impl) { return impl->name ? impl->name : "c-client"; }

/* serves_mode says whether the implementation serves mode. */
static int serves_mode(const specsim_impl *impl, const char *mode)
{
    const char *m = impl->modes ? impl->modes : "verify,step";
    size_t n = strlen(mode);
    while (*m) {
        if (strncmp(m, mode, n) == 0 && (m[n] == ',' || m[n] == '\0')) return 1;
        m = strchr(m, ',');
        if (m == NULL) break;
        m++;
    }
    return 0;
}

/* refusal returns why the session cannot serve the hello (written into
 * buf, 256 bytes, where it is formatted), or NULL. */
static const char *refusal(session *s, const char *source, char *buf)
{
    if (strcmp(s->mode, "verify") != 0 && strcmp(s->mode, "step") != 0) {
        sprintf(buf, "%.60s mode is not served by the C client (specsim.c serves verify and step mode)", s->mode);
        return buf;
    }
    if (!serves_mode(s->impl, s->mode)) {
        sprintf(buf, "%.60s does not serve %s mode (it serves %.60s)", impl_name(s->impl), s->mode, s->impl->modes);
        return buf;
    }
    if (strcmp(source, "markov") == 0)
        return "step mode on a model pair (the harness ships its tables) is not served by the C client (specsim.c); use a pool source (dirichlet:, zipf:, temperature:)";
    return NULL;
}

/* read_sampling reads the hello's sampling object, if any. */
static int read_sampling(session *s)
{
    const jnode *n = member(&s->j, 0, "sampling");
    const char *keys[4] = {"temperature", "top_k", "top_p", "min_p"};
    double v[4] = {1, 0, 1, 0};
    int k, c;
    char buf[40];
    s->have_sampling = 0;
    if (n == NULL || n->type == J_NULL) return 0;
    if (n->type != J_OBJ) return fail("the hello's \"sampling\" is not an object");
    for (k = 0; k < 4; k++) {
        for (c = n->first; c >= 0; c = s->j.nodes[c].next) {
            const jnode *m = &s->j.nodes[c];
            if (strcmp(m->key, keys[k]) != 0) continue;
            if (m->type != J_NUM) return fail("the hello's sampling.%s is not a number", keys[k]);
            v[k] = strtod(num_text(m, buf, sizeof buf), NULL);
        }
    }
    s->sampling.temperature = v[0];
    s->sampling.top_k = (int64_t)v[1];
    s->sampling.top_p = v[2];
    s->sampling.min_p = v[3];
    s->have_sampling = 1;
    return 0;
}

/* on_hello answers the hello: ready, or an error naming what is not
 * served (then returns -1). */
static int on_hello(session *s)
{
    int64_t proto, g, v;
    const char *mode = get_str(&s->j, "mode", NULL), *why;
    char buf[256];
    if (mode == NULL) return fail("the hello has no \"mode\"");
    if (get_int(&s->j, "protocol", 1, 1000, 1, 1, &proto) < 0 || get_int(&s->j, "gamma", 1, 4096, 0, 0, &g) < 0 ||
        get_int(&s->j, "vocab", 2, 1 << 30, 0, 0, &v) < 0 || read_sampling(s) < 0)
        return -1;
    strncpy(s->mode, mode, sizeof s->mode - 1);
    s->mode[sizeof s->mode - 1] = '\0';
    s->protocol = proto < SPECSIM_PROTOCOL ? (int)proto : SPECSIM_PROTOCOL;
    s->gamma = (int)g;
    s->vocab = (int)v;
    why = refusal(s, get_str(&s->j, "source", "inline"), buf);
    if (why != NULL) {
        send_error(s->out, 0, why);
        return fail("%s", why);
    }
    fprintf(s->out, "{\"op\":\"ready\",\"protocol\":%d,\"name\":", s->protocol);
    write_json_string(s->out, impl_name(s->impl));
    fprintf(s->out, ",\"takes_sampling\":%s,\"arrays\":[]}\n", s->impl->takes_sampling ? "true" : "false");
    return flush(s->out);
}

/* arrays_of returns the root's "arrays" member as a node, checking that
 * it holds at most MAX_ARRAYS strings. */
static const jnode *arrays_of(session *s, int *count)
{
    const jnode *a = member(&s->j, 0, "arrays");
    int c, n = 0;
    if (a == NULL || a->type != J_ARR) { fail("the %s message has no \"arrays\" list", get_str(&s->j, "op", "?")); return NULL; }
    for (c = a->first; c >= 0; c = s->j.nodes[c].next, n++) {
        if (s->j.nodes[c].type != J_STR) { fail("the \"arrays\" list holds a value that is not a name"); return NULL; }
        if (n == MAX_ARRAYS) { fail("a message names more than %d arrays", MAX_ARRAYS); return NULL; }
    }
    *count = n;
    return a;
}

/* want_shape checks an array's dtype and shape. */
static int want_shape(const specsim_array *a, const char *descr, int ndim, int64_t d0, int64_t d1, int64_t d2)
{
    int64_t d[3];
    int k;
    d[0] = d0;
    d[1] = d1;
    d[2] = d2;
    if (strcmp(a->descr, descr) != 0) return fail("array \"%s\" has dtype %s, want %s", a->name, a->descr, descr);
    if (a->ndim != ndim) return fail("array \"%s\" has %d dimensions, want %d", a->name, a->ndim, ndim);
    for (k = 0; k < ndim; k++)
        if (a->shape[k] != d[k]) return fail("array \"%s\" has dimension %d of length %lld, want %lld", a->name, k, (long long)a->shape[k], (long long)d[k]);
    return 0;
}

/* on_pool stores the pool's rows. */
static int on_pool(session *s)
{
    int n, k;
    int64_t c;
    const jnode *a = arrays_of(s, &n);
    const char *names[2] = {"p", "q"};
    if (a == NULL || get_int(&s->j, "contexts", 1, INT32_MAX, 0, 0, &c) < 0) return -1;
    if (n != 2 || strcmp(s->j.nodes[a->first].text, "p") != 0 || strcmp(s->j.nodes[s->j.nodes[a->first].next].text, "q") != 0)
        return fail("the pool message must carry arrays [\"p\", \"q\"]");
    for (k = 0; k < 2; k++) {
        if (read_npy(s->in, &s->pool[k], names[k]) < 0 ||
            want_shape(&s->pool[k].a, "<f4", 3, c, s->gamma + 1 - k, s->vocab) < 0)
            return -1;
    }
    s->contexts = (int)c;
    fputs("{\"op\":\"ok\",\"batch\":0,\"arrays\":[]}\n", s->out);
    return flush(s->out);
}

/* get_seed reads the batch's "seed", an unsigned 64-bit integer. */
static int get_seed(session *s, uint64_t *out)
{
    const jnode *n = member(&s->j, 0, "seed");
    char buf[40], *end;
    unsigned long long v;
    *out = 0;
    if (n == NULL) return 0;
    if (n->type != J_NUM || n->text[0] == '-') return fail("the batch's \"seed\" is not an unsigned integer");
    errno = 0;
    v = strtoull(num_text(n, buf, sizeof buf), &end, 10);
    if (errno != 0 || *end != '\0') return fail("the batch's \"seed\" = %s is not a 64-bit unsigned integer", buf);
    *out = (uint64_t)v;
    return 0;
}

/* check_ints checks that an int64 array's values lie in [lo, hi]. */
static int check_ints(const specsim_array *a, int64_t lo, int64_t hi)
{
    size_t i;
    for (i = 0; i < a->n; i++)
        if (a->i64[i] < lo || a->i64[i] > hi)
            return fail("array \"%s\": element %lu = %lld is outside [%lld, %lld]", a->name, (unsigned long)i, (long long)a->i64[i], (long long)lo, (long long)hi);
    return 0;
}

/* check_array checks the dtype, shape and values of a batch array the
 * client interprets; other arrays (per-row sampling parameters and
 * seeds, or arrays of a later protocol) are passed on as they came. */
static int check_array(session *s, const specsim_array *a, int b)
{
    int g = s->gamma, v = s->vocab;
    if (strcmp(a->name, "ctx") == 0) {
        if (s->contexts == 0) return fail("a batch of pool rows (ctx) before the pool message");
        return want_shape(a, "<i8", 1, b, 0, 0) < 0 ? -1 : check_ints(a, 0, s->contexts - 1);
    }
    if (strcmp(a->name, "p") == 0) return want_shape(a, "<f4", 3, b, g + 1, v);
    if (strcmp(a->name, "q") == 0) return want_shape(a, "<f4", 3, b, g, v);
    if (strcmp(a->name, "drafts") == 0) return want_shape(a, "<i8", 2, b, g, 0) < 0 ? -1 : check_ints(a, -1, v - 1);
    if (strcmp(a->name, "gamma") == 0) return want_shape(a, "<i8", 1, b, 0, 0) < 0 ? -1 : check_ints(a, 1, g);
    if (strcmp(a->name, "seed") == 0) return want_shape(a, "<i8", 1, b, 0, 0);
    return 0;
}

/* read_batch_arrays reads the batch's frames into the session's slots
 * and points batch at them. */
static int read_batch_arrays(session *s, specsim_batch *bt)
{
    int n, k = 0, c;
    const jnode *a = arrays_of(s, &n);
    if (a == NULL) return -1;
    for (c = a->first; c >= 0; c = s->j.nodes[c].next, k++) {
        const char *name = s->j.nodes[c].text;
        if (strlen(name) >= sizeof s->arr[k].a.name) return fail("an array name longer than %d bytes", (int)sizeof s->arr[k].a.name - 1);
        if (read_npy(s->in, &s->arr[k], name) < 0 || check_array(s, &s->arr[k].a, bt->size) < 0) return -1;
        s->view[k] = s->arr[k].a;
    }
    bt->arrays = s->view;
    bt->narrays = n;
    return 0;
}

/* rows_of points the batch at its rows (pool or inline) and drafts. */
static int rows_of(session *s, specsim_batch *bt, const char *rows)
{
    const specsim_array *ctx = specsim_batch_array(bt, "ctx"), *p = specsim_batch_array(bt, "p"),
                        *q = specsim_batch_array(bt, "q"), *d = specsim_batch_array(bt, "drafts");
    if (strcmp(rows, "pool") == 0) {
        if (ctx == NULL) return fail("a batch of pool rows without its \"ctx\" array");
        bt->ctx = ctx->i64;
        bt->p_rows = s->pool[0].a.f32;
        bt->q_rows = s->pool[1].a.f32;
    } else if (strcmp(rows, "inline") == 0) {
        if (p == NULL || q == NULL) return fail("a batch of inline rows without its \"p\" and \"q\" arrays");
        bt->ctx = NULL;
        bt->p_rows = p->f32;
        bt->q_rows = q->f32;
    } else {
        return fail("a batch with rows \"%s\"; the C client serves rows \"pool\" and \"inline\"", rows);
    }
    if (strcmp(s->mode, "verify") == 0 && d == NULL) return fail("a verify-mode batch without its \"drafts\" array");
    bt->drafts = strcmp(s->mode, "verify") == 0 ? d->i64 : NULL;
    return 0;
}

/* set_coins seeds the batch's generator, or scripts it for the edge
 * cases. */
static int set_coins(session *s, specsim_batch *bt)
{
    bt->rng = &s->rng;
    bt->row_rng = &s->row_rng;
    rng_seed(bt->rng, bt->seed);
    if (strcmp(bt->coins, "random") == 0) return 0;
    bt->rng->scripted = 1;
    if (strcmp(bt->coins, "zero") == 0) bt->rng->value = 0.0;
    else if (strcmp(bt->coins, "max") == 0) bt->rng->value = (double)((UINT64_C(1) << 53) - 1) / 9007199254740992.0;
    else return fail("a batch with coins \"%s\"; the C client knows \"random\", \"zero\" and \"max\"", bt->coins);
    return 0;
}

/* reply_buffers sizes the reply arrays and fills them with -1. */
static int reply_buffers(session *s, int b, specsim_reply *r)
{
    size_t need = (size_t)b * (size_t)(s->gamma + 1), i;
    if (need / (size_t)(s->gamma + 1) != (size_t)b || need > SIZE_MAX / sizeof(int64_t)) return fail("a reply of %d rows is too large", b);
    if (need > s->reply_cap) {
        int64_t *e = (int64_t *)realloc(s->emitted, need * sizeof *e), *d;
        if (e == NULL) return fail("out of memory for a reply of %d rows", b);
        s->emitted = e;
        if ((d = (int64_t *)realloc(s->drafts, need * sizeof *d)) == NULL) return fail("out of memory for a reply of %d rows", b);
        s->drafts = d;
        s->reply_cap = need;
    }
    for (i = 0; i < need; i++) s->emitted[i] = s->drafts[i] = -1;
    memset(r, 0, sizeof *r);
    r->emitted = s->emitted;
    r->drafts = strcmp(s->mode, "step") == 0 ? s->drafts : NULL;
    r->with_drafts = r->drafts != NULL;
    return 0;
}

/* send_result writes the callback's reply. */
static int send_result(session *s, const specsim_batch *bt, const specsim_reply *r)
{
    int drafts = strcmp(s->mode, "step") == 0 && (r->with_drafts || s->protocol < 2);
    fprintf(s->out, "{\"op\":\"result\",\"batch\":%d,\"arrays\":[%s\"emitted\"]}\n", bt->index, drafts ? "\"drafts\"," : "");
    if (drafts && write_i64(s->out, s->drafts, bt->size, s->gamma) < 0) return -1;
    if (write_i64(s->out, s->emitted, bt->size, s->gamma + 1) < 0) return -1;
    return flush(s->out);
}

/* on_batch reads a chain batch, calls the verifier and answers. */
static int on_batch(session *s)
{
    specsim_batch bt;
    specsim_reply r;
    int64_t k, size, first;
    int rc;
    memset(&bt, 0, sizeof bt);
    if (get_int(&s->j, "batch", 0, INT32_MAX, 0, 0, &k) < 0 || get_int(&s->j, "size", 1, 1 << 24, 0, 0, &size) < 0 ||
        get_int(&s->j, "first_step", 0, INT64_MAX, 1, 0, &first) < 0 || get_seed(s, &bt.seed) < 0)
        return -1;
    bt.mode = s->mode;
    bt.protocol = s->protocol;
    bt.index = (int)k;
    bt.first_step = first;
    bt.size = (int)size;
    bt.gamma = s->gamma;
    bt.vocab = s->vocab;
    bt.coins = get_str(&s->j, "coins", "random");
    bt.sampling = s->have_sampling ? &s->sampling : NULL;
    if (read_batch_arrays(s, &bt) < 0 || rows_of(s, &bt, get_str(&s->j, "rows", "inline")) < 0 || set_coins(s, &bt) < 0 ||
        reply_buffers(s, bt.size, &r) < 0)
        return -1;
    rc = s->impl->verify(&bt, &r, s->impl->user);
    if (rc == 0 && !r.with_drafts && s->protocol < 2 && r.drafts != NULL) {
        rc = -1;
        strcpy(r.error, "with_drafts = 0 (emitted alone) needs protocol 2; the harness speaks protocol 1");
    }
    if (rc != 0) {
        r.error[sizeof r.error - 1] = '\0';
        if (r.error[0] == '\0') sprintf(r.error, "the verifier returned %d", rc);
        (void)fail("batch %d: %s", bt.index, r.error);
        return send_error(s->out, bt.index, r.error);
    }
    return send_result(s, &bt, &r);
}

static void session_free(session *s)
{
    int k;
    for (k = 0; k < 2; k++) free(s->pool[k].data);
    for (k = 0; k < MAX_ARRAYS; k++) free(s->arr[k].data);
    free(s->j.nodes);
    free(s->line);
    free(s->emitted);
    free(s->drafts);
}

/* dispatch handles one message; 1 means close. */
static int dispatch(session *s, const char *op)
{
    if (strcmp(op, "close") == 0) return 1;
    if (strcmp(op, "hello") == 0) return on_hello(s);
    if (s->gamma == 0) return fail("a \"%s\" message before the hello", op);
    if (strcmp(op, "pool") == 0) return on_pool(s);
    if (strcmp(op, "batch") == 0) return on_batch(s);
    send_error(s->out, 0, "the C client (specsim.c) does not serve this message");
    return fail("unknown message \"%s\"", op);
}

int specsim_serve(const specsim_impl *impl, FILE *in, FILE *out)
{
    session s;
    int rc = -1;
    memset(&s, 0, sizeof s);
    s.impl = impl;
    s.in = in;
    s.out = out;
    if (impl == NULL || impl->verify == NULL) {
        fail("specsim_serve needs an implementation with a verify callback");
        return 1;
    }
    for (;;) {
        const char *op;
        long n = read_line(in, &s.line, &s.cap);
        if (n == -2) { fail("the input ended without a close message"); break; }
        if (n < 0 || json_parse(&s.j, s.line, (size_t)n) < 0) break;
        if ((op = get_str(&s.j, "op", NULL)) == NULL) { fail("the header has no \"op\""); break; }
        if ((rc = dispatch(&s, op)) != 0) break;
    }
    session_free(&s);
    return rc == 1 ? 0 : 1;
}

int specsim_main(const specsim_impl *impl) { return specsim_serve(impl, stdin, stdout); }

/* ---------------------------------------------------------------- rows */

const float *specsim_p(const specsim_batch *bt, int b, int i)
{
    size_t row = bt->ctx ? (size_t)bt->ctx[b] : (size_t)b;
    return bt->p_rows + (row * (size_t)(bt->gamma + 1) + (size_t)i) * (size_t)bt->vocab;
}

const float *specsim_q(const specsim_batch *bt, int b, int i)
{
    size_t row = bt->ctx ? (size_t)bt->ctx[b] : (size_t)b;
    return bt->q_rows + (row * (size_t)bt->gamma + (size_t)i) * (size_t)bt->vocab;
}

int64_t specsim_draft(const specsim_batch *bt, int b, int i)
{
    return bt->drafts ? bt->drafts[(size_t)b * (size_t)bt->gamma + (size_t)i] : -1;
}

int specsim_row_gamma(const specsim_batch *bt, int b)
{
    const specsim_array *g = specsim_batch_array(bt, "gamma");
    return g ? (int)g->i64[b] : bt->gamma;
}

specsim_rng *specsim_row_rng(const specsim_batch *bt, int b)
{
    const specsim_array *seed = specsim_batch_array(bt, "seed");
    if (bt->rng->scripted || seed == NULL || seed->i64 == NULL || seed->i64[b] < 0) return bt->rng;
    rng_seed(bt->row_rng, (uint64_t)seed->i64[b]);
    return bt->row_rng;
}

const specsim_array *specsim_batch_array(const specsim_batch *bt, const char *name)
{
    int k;
    for (k = 0; k < bt->narrays; k++)
        if (strcmp(bt->arrays[k].name, name) == 0) return &bt->arrays[k];
    return NULL;
}
