/*
 * w2l cat NAMESPACE.TABLE: the rows of a table at its current snapshot (or --snapshot ID)
 * with every delete applied, read through the library's own scan (w2l_lake_scan(3)).
 *
 * --format json (default): one JSON object per row, keys in schema order. Values are the
 * canonical texts of w2l_value_format(3): booleans and int, long, float and double as JSON
 * literals (NaN and infinities, which JSON lacks, as strings), every other type as a
 * string — decimals too, so no reader rounds them — with binary as lowercase hex.
 * --format table: a header of column names, aligned columns (NULL for null) and a last
 * line "(N rows)". The table form holds every row in memory to align them; json streams.
 *
 * A reader that stops early (`w2l cat ... | head`) closes the pipe (or socket): that is a
 * normal end, exit 0 with nothing on stderr, not a write error.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

typedef struct cat_ctx {
    int table;            /* --format table */
    char *buf;            /* formatting buffer, grown on demand */
    size_t cap;
    /* table form: cells row-major, ncols per row; the header is row 0 */
    char **cells;
    size_t ncols, nrows, ccap;
    int oom;
    int closed;           /* the reader closed standard output (reader_gone) */
} cat_ctx;

/* 1 when error e of a write means the reader closed standard output: EPIPE for a pipe,
 * ECONNRESET for a socket (some launchers give their children socket pairs as stdio) whose
 * reader closed with data unread. */
static int reader_gone(int e) { return e == EPIPE || e == ECONNRESET; }

/* 1 when standard output has failed; notes in c whether its reader closed it. */
static int out_failed(cat_ctx *c)
{
    if (!ferror(stdout)) return 0;
    if (reader_gone(errno)) c->closed = 1;
    return 1;
}

/* The canonical text of v in ctx->buf (NUL-terminated); NULL when out of memory. */
static const char *format_value(cat_ctx *c, w2l_type t, const w2l_value *v, size_t *len)
{
    size_t need = w2l_value_format(t, v, c->buf, c->cap);
    if (need >= c->cap) {
        char *b = realloc(c->buf, need + 1);
        if (!b) return NULL;
        c->buf = b;
        c->cap = need + 1;
        w2l_value_format(t, v, c->buf, c->cap);
    }
    *len = need;
    return c->buf;
}

static int json_row(cat_ctx *c, const w2l_schema *s, const w2l_value *row, size_t n)
{
    putchar('{');
    for (size_t i = 0; i < n; i++) {
        const w2l_field *f = w2l_schema_field(s, i);
        if (i) putchar(',');
        cli_json_string(stdout, f->name, strlen(f->name));
        putchar(':');
        size_t len;
        const char *text = format_value(c, f->type, &row[i], &len);
        if (!text) return c->oom = 1;
        int literal = 0;
        if (row[i].is_null) {
            literal = 1;
        } else {
            switch (f->type.id) {
            case W2L_TYPE_BOOLEAN: case W2L_TYPE_INT: case W2L_TYPE_LONG: literal = 1; break;
            case W2L_TYPE_FLOAT: case W2L_TYPE_DOUBLE:
                literal = strcmp(text, "NaN") != 0 && strstr(text, "Infinity") == NULL;
                break;
            default: break;
            }
        }
        if (literal) fwrite(text, 1, len, stdout);
        else cli_json_string(stdout, text, len);
    }
    fputs("}\n", stdout);
    return out_failed(c);
}

static int on_row(void *ctx, const w2l_schema *s, const w2l_value *row, size_t n)
{
    cat_ctx *c = ctx;
    if (!c->table) return json_row(c, s, row, n);
    if (!c->ncols) {
        c->ncols = n;
        char **hdr = calloc(n ? n : 1, sizeof *hdr);
        if (!hdr) return c->oom = 1;
        free(c->cells);
        c->cells = hdr;
        c->ccap = n;
        for (size_t i = 0; i < n; i++) {
            hdr[i] = strdup(w2l_schema_field(s, i)->name);
            if (!hdr[i]) return c->oom = 1;
        }
        c->nrows = 1;
    }
    if ((c->nrows + 1) * c->ncols > c->ccap) {
        size_t cap =
            c->ccap * 2 > (c->nrows + 1) * c->ncols ? c->ccap * 2 : (c->nrows + 1) * c->ncols;
        char **p = realloc(c->cells, cap * sizeof *p);
        if (!p) return c->oom = 1;
        c->cells = p;
        c->ccap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len;
        const char *text =
            row[i].is_null ? "NULL" : format_value(c, w2l_schema_field(s, i)->type, &row[i], &len);
        if (!text) return c->oom = 1;
        if (row[i].is_null) len = 4;
        char *cell = malloc(len + 1);
        if (!cell) return c->oom = 1;
        for (size_t k = 0; k < len; k++)
            cell[k] = (unsigned char)text[k] < 0x20 || text[k] == 0x7f ? ' ' : text[k];
        cell[len] = '\0';
        c->cells[c->nrows * c->ncols + i] = cell;
    }
    c->nrows++;
    return 0;
}

/* Display width of UTF-8 text: code points (continuation bytes do not count). */
static size_t width(const char *s)
{
    size_t w = 0;
    for (; *s; s++) w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static void print_table(cat_ctx *c)
{
    size_t *w = calloc(c->ncols ? c->ncols : 1, sizeof *w);
    if (!w) {
        c->oom = 1;
        return;
    }
    for (size_t r = 0; r < c->nrows; r++)
        for (size_t i = 0; i < c->ncols; i++) {
            size_t x = width(c->cells[r * c->ncols + i]);
            if (x > w[i]) w[i] = x;
        }
    for (size_t r = 0; r < c->nrows; r++) {
        for (size_t i = 0; i < c->ncols; i++) {
            const char *cell = c->cells[r * c->ncols + i];
            fputs(cell, stdout);
            if (i + 1 < c->ncols)
                for (size_t k = width(cell); k < w[i] + 2; k++) putchar(' ');
        }
        putchar('\n');
    }
    free(w);
}

int cmd_cat(int argc, char **argv)
{
    w2l_conf *conf;
    w2l_lake *lake;
    cli_args args;
    signal(SIGPIPE, SIG_IGN); /* a closed pipe is seen as EPIPE, and is a normal end */
    int rc = cli_open_lake("cat", argc, argv, &args, &conf, &lake);
    if (rc != EXIT_DONE) return rc;
    w2l_error err;
    cat_ctx c;
    memset(&c, 0, sizeof c);
    int64_t snapshot = -1;
    char ns[256], table[256];
    const char *dot = strchr(args.operand, '.');
    if (!dot || dot == args.operand || !dot[1] || (size_t)(dot - args.operand) >= sizeof ns ||
        strlen(dot + 1) >= sizeof table) {
        fprintf(stderr, "w2l cat: '%s' is not NAMESPACE.TABLE (see w2l help cat)\n", args.operand);
        rc = EXIT_USAGE;
    } else {
        snprintf(ns, sizeof ns, "%.*s", (int)(dot - args.operand), args.operand);
        snprintf(table, sizeof table, "%s", dot + 1);
    }
    const char *snap = args.extra[0], *format = args.extra[1];
    if (rc == EXIT_DONE && snap) {
        char *end;
        long long v = strtoll(snap, &end, 10);
        if (!*snap || *end || v < 0) {
            fprintf(stderr,
                    "w2l cat: --snapshot: expected a snapshot id, got '%s' (see w2l help cat)\n",
                    snap);
            rc = EXIT_USAGE;
        }
        snapshot = v;
    }
    if (rc == EXIT_DONE && format && strcmp(format, "json") != 0 && strcmp(format, "table") != 0) {
        fprintf(stderr, "w2l cat: --format: expected json or table, got '%s' (see w2l help cat)\n",
                format);
        rc = EXIT_USAGE;
    }
    c.table = format && strcmp(format, "table") == 0;
    if (rc == EXIT_DONE) {
        w2l_rc r = w2l_lake_scan(lake, ns, table, snapshot, on_row, &c, &err);
        if (r == W2L_OK && c.oom) r = w2l_error_set(&err, W2L_NOMEM, "out of memory");
        if (r == W2L_CANCELLED && c.closed) r = W2L_OK; /* the reader has what it wanted */
        else if (r == W2L_CANCELLED && ferror(stdout))
            r = w2l_error_set(&err, W2L_IO, "writing rows to standard output failed: %s",
                              strerror(errno));
        if (r != W2L_OK) rc = cli_fail("cat", &err, r);
    }
    if (rc == EXIT_DONE && c.table && !c.closed) {
        if (c.nrows) print_table(&c);
        printf("(%zu row%s)\n", c.nrows ? c.nrows - 1 : 0, c.nrows == 2 ? "" : "s");
    }
    if (!c.closed && (fflush(stdout) != 0 || ferror(stdout)) && !reader_gone(errno) &&
        rc == EXIT_DONE) {
        fprintf(stderr, "w2l cat: writing rows to standard output failed: %s\n", strerror(errno));
        rc = EXIT_RUNTIME;
    }
    for (size_t i = 0; i < c.nrows * c.ncols; i++) free(c.cells[i]);
    free(c.cells);
    free(c.buf);
    cli_finish(conf, lake);
    return rc;
}
