/*
 * Partition transforms and partition values (Iceberg spec: "Partitioning", "Partition
 * Transforms", "Bucket Transform Details", "Truncate Transform Details"; Appendix B for
 * the 32-bit Murmur3 hash). Also the Hive-style partition directory names writers use, and
 * partition-by clauses as Spark and Trino DDL write them (w2l__ice_spec_parse).
 * (Appendix D single-value serialization is lib/model's w2l__value_to_bytes.)
 *
 * Worked example: bucket[16] of the int 34 hashes the 8-byte little-endian long 34
 * (22 00 00 00 00 00 00 00) with Murmur3 x86_32 seed 0 -> 2017239379; (h & INT32_MAX) % 16 = 3.
 */
#include <stdio.h>
#include <stdlib.h>

#include "iceberg.h"
#include "../model/model.h"

w2l_rc w2l__ice_transform_parse(const char *text, w2l__ice_transform *out, w2l_error *err)
{
    static const struct { const char *name; w2l__ice_tkind kind; } plain[] = {
        {"identity", W2L_ICE_T_IDENTITY}, {"year", W2L_ICE_T_YEAR}, {"month", W2L_ICE_T_MONTH},
        {"day", W2L_ICE_T_DAY}, {"hour", W2L_ICE_T_HOUR}, {"void", W2L_ICE_T_VOID}};
    out->param = 0;
    for (size_t i = 0; i < W2L_ARRAY_LEN(plain); i++)
        if (strcmp(text, plain[i].name) == 0) {
            out->kind = plain[i].kind;
            return W2L_OK;
        }
    const char *arg = NULL;
    if (strncmp(text, "bucket[", 7) == 0) out->kind = W2L_ICE_T_BUCKET, arg = text + 7;
    else if (strncmp(text, "truncate[", 9) == 0) out->kind = W2L_ICE_T_TRUNCATE, arg = text + 9;
    if (arg) {
        char *end;
        long n = strtol(arg, &end, 10);
        if (end != arg && end[0] == ']' && end[1] == '\0' && n > 0 && n <= INT32_MAX) {
            out->param = (int32_t)n;
            return W2L_OK;
        }
    }
    return w2l__fail(err, W2L_SCHEMA, "unknown partition transform '%.100s'", text);
}

size_t w2l__ice_transform_format(w2l__ice_transform t, char *buf, size_t size)
{
    static const char *names[] = {"identity", "bucket", "truncate", "year", "month", "day",
                                  "hour", "void"};
    if (t.kind == W2L_ICE_T_BUCKET || t.kind == W2L_ICE_T_TRUNCATE)
        return (size_t)snprintf(buf, size, "%s[%d]", names[t.kind], (int)t.param);
    return (size_t)snprintf(buf, size, "%s", names[t.kind]);
}

static int is_time_like(w2l_type_id id)
{
    return id == W2L_TYPE_DATE || id == W2L_TYPE_TIMESTAMP || id == W2L_TYPE_TIMESTAMPTZ;
}

w2l_rc w2l__ice_transform_result(w2l__ice_transform t, w2l_type src, w2l_type *out,
                                 w2l_error *err)
{
    w2l_type r = src;
    int ok = 1;
    switch (t.kind) {
    case W2L_ICE_T_IDENTITY:
    case W2L_ICE_T_VOID: break;
    case W2L_ICE_T_BUCKET:
        ok = src.id != W2L_TYPE_BOOLEAN && src.id != W2L_TYPE_FLOAT && src.id != W2L_TYPE_DOUBLE;
        r = (w2l_type){W2L_TYPE_INT, 0, 0};
        break;
    case W2L_ICE_T_TRUNCATE:
        ok = src.id == W2L_TYPE_INT || src.id == W2L_TYPE_LONG || src.id == W2L_TYPE_DECIMAL ||
             src.id == W2L_TYPE_STRING || src.id == W2L_TYPE_BINARY;
        break;
    case W2L_ICE_T_YEAR:
    case W2L_ICE_T_MONTH:
        ok = is_time_like(src.id);
        r = (w2l_type){W2L_TYPE_INT, 0, 0};
        break;
    case W2L_ICE_T_DAY: /* days from 1970-01-01, typed date as Iceberg Java writes it */
        ok = is_time_like(src.id);
        r = (w2l_type){W2L_TYPE_DATE, 0, 0};
        break;
    case W2L_ICE_T_HOUR:
        ok = src.id == W2L_TYPE_TIMESTAMP || src.id == W2L_TYPE_TIMESTAMPTZ;
        r = (w2l_type){W2L_TYPE_INT, 0, 0};
        break;
    }
    if (!ok) {
        char tb[64], sb[32];
        w2l__ice_transform_format(t, tb, sizeof tb);
        return w2l__fail(err, W2L_SCHEMA, "partition transform %s does not apply to %s", tb,
                         w2l_type_format(src, sb, sizeof sb));
    }
    *out = r;
    return W2L_OK;
}

uint32_t w2l__ice_murmur3(const void *data, size_t len)
{
    const unsigned char *p = data;
    const uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
    uint32_t h = 0;
    size_t nblocks = len / 4;
    for (size_t i = 0; i < nblocks; i++) {
        uint32_t k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
        h = (h << 13) | (h >> 19);
        h = h * 5 + 0xe6546b64;
    }
    const unsigned char *tail = p + nblocks * 4;
    uint32_t k = 0;
    switch (len & 3) {
    case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
    case 2: k ^= (uint32_t)tail[1] << 8;  /* fall through */
    case 1:
        k ^= tail[0];
        k *= c1;
        k = (k << 15) | (k >> 17);
        k *= c2;
        h ^= k;
    }
    h ^= (uint32_t)len;
    h ^= h >> 16;
    h *= 0x85ebca6b;
    h ^= h >> 13;
    h *= 0xc2b2ae35;
    h ^= h >> 16;
    return h;
}


/* Days since epoch of a date or timestamp value. */
static int64_t days_of(w2l_type src, const w2l_value *in)
{
    if (src.id == W2L_TYPE_DATE) return in->v.i32;
    return w2l__floor_div(in->v.i64, W2L_MICROS_PER_DAY);
}

/* v - floor_mod(v, w) for 1 <= w <= INT32_MAX: "Truncate Transform Details" for a decimal's
 * unscaled value (the width applies at the column's scale), exact over all 128 bits. 0, or -1
 * when the result does not fit. */
static int truncate_i128(w2l_int128 v, int32_t w, w2l_int128 *out)
{
    int neg = w2l__i128_is_neg(v);
    uint64_t hi = (uint64_t)v.hi, lo = v.lo;
    if (neg) { /* the magnitude, as unsigned (exact for the minimum too) */
        hi = ~hi;
        lo = ~lo + 1;
        if (lo == 0) hi++;
    }
    /* |v| mod w, one 32-bit limb at a time: each step's dividend stays below 2^63 */
    const uint32_t limb[4] = {(uint32_t)(hi >> 32), (uint32_t)hi, (uint32_t)(lo >> 32),
                              (uint32_t)lo};
    uint64_t r = 0;
    for (int i = 0; i < 4; i++) r = ((r << 32) | limb[i]) % (uint64_t)w;
    if (neg && r) r = (uint64_t)w - r;
    return w2l__i128_sub(v, w2l__i128_from_i64((int64_t)r), out);
}

static int32_t utf8_prefix_len(const char *s, size_t len, int32_t cps)
{
    size_t i = 0;
    int32_t n = 0;
    while (i < len && n < cps) {
        unsigned char c = (unsigned char)s[i];
        size_t step = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        i += step;
        n++;
    }
    return (int32_t)W2L_MIN(i, len);
}

w2l_rc w2l__ice_transform_apply(w2l__ice_transform t, w2l_type src, const w2l_value *in,
                                w2l_value *out, w2l_error *err)
{
    w2l_type rt;
    W2L_TRY(w2l__ice_transform_result(t, src, &rt, err));
    memset(out, 0, sizeof *out);
    if (!in || in->is_null || t.kind == W2L_ICE_T_VOID) {
        out->is_null = 1;
        return W2L_OK;
    }
    switch (t.kind) {
    case W2L_ICE_T_IDENTITY:
    case W2L_ICE_T_VOID: *out = *in; return W2L_OK;
    case W2L_ICE_T_BUCKET: {
        unsigned char b[16];
        const void *p = b;
        size_t n;
        switch (src.id) {
        case W2L_TYPE_INT:
        case W2L_TYPE_DATE: w2l__put_le(b, (uint64_t)(int64_t)in->v.i32, 8); n = 8; break;
        case W2L_TYPE_STRING:
        case W2L_TYPE_BINARY: p = in->v.bytes.ptr; n = in->v.bytes.len; break;
        case W2L_TYPE_DECIMAL: n = w2l__decimal_to_be_min(in->v.dec, b); break;
        default: w2l__put_le(b, (uint64_t)in->v.i64, 8); n = 8; break;
        }
        out->v.i32 = (int32_t)((w2l__ice_murmur3(p, n) & INT32_MAX) % (uint32_t)t.param);
        return W2L_OK;
    }
    case W2L_ICE_T_TRUNCATE: {
        int64_t w = t.param;
        *out = *in;
        switch (src.id) {
        case W2L_TYPE_INT: out->v.i32 = (int32_t)(in->v.i32 - w2l__floor_mod(in->v.i32, w)); break;
        case W2L_TYPE_LONG: /* wraps at the minimum, as Java's long arithmetic does */
            out->v.i64 = (int64_t)((uint64_t)in->v.i64 - (uint64_t)w2l__floor_mod(in->v.i64, w));
            break;
        case W2L_TYPE_STRING:
            out->v.bytes.len = (size_t)utf8_prefix_len(in->v.bytes.ptr, in->v.bytes.len, t.param);
            break;
        case W2L_TYPE_BINARY: out->v.bytes.len = W2L_MIN(in->v.bytes.len, (size_t)w); break;
        case W2L_TYPE_DECIMAL:
            if (truncate_i128(in->v.dec, t.param, &out->v.dec) != 0)
                return w2l__fail(err, W2L_SCHEMA, "truncate[%d] of a decimal: out of range",
                                 (int)t.param);
            break;
        default: break;
        }
        return W2L_OK;
    }
    case W2L_ICE_T_YEAR:
    case W2L_ICE_T_MONTH: {
        int64_t y;
        unsigned m, d;
        w2l__civil_from_days(days_of(src, in), &y, &m, &d);
        out->v.i32 = (int32_t)(t.kind == W2L_ICE_T_YEAR ? y - 1970 : (y - 1970) * 12 + (m - 1));
        return W2L_OK;
    }
    case W2L_ICE_T_DAY: out->v.i32 = (int32_t)days_of(src, in); return W2L_OK;
    case W2L_ICE_T_HOUR:
        out->v.i32 = (int32_t)w2l__floor_div(in->v.i64, INT64_C(3600000000));
        return W2L_OK;
    }
    return W2L_OK;
}

void w2l__ice_spec_release(w2l__ice_spec *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nfields; i++) w2l__free(s->fields[i].name);
    w2l__free(s->fields);
    s->fields = NULL;
    s->nfields = 0;
}

char *w2l__ice_spec_format(const w2l__ice_spec *spec, const w2l_schema *schema)
{
    static const char *names[] = {"identity", "bucket", "truncate", "year", "month", "day",
                                  "hour", "void"};
    w2l_buf b = {0};
    w2l_error e;
    for (size_t i = 0; spec && i < spec->nfields; i++) {
        const w2l__ice_pfield *f = &spec->fields[i];
        long at = schema ? w2l_schema_index_of_id(schema, f->source_id) : -1;
        char id[24];
        snprintf(id, sizeof id, "%d", (int)f->source_id);
        const char *col = at >= 0 ? w2l_schema_field(schema, (size_t)at)->name : id;
        w2l__ice_tkind k = f->transform.kind;
        w2l_rc rc = i ? w2l_buf_append(&b, ", ", 2, &e) : W2L_OK;
        if (rc != W2L_OK) break;
        if (k == W2L_ICE_T_IDENTITY) rc = w2l__buf_printf(&b, &e, "%s", col);
        else if (k == W2L_ICE_T_BUCKET || k == W2L_ICE_T_TRUNCATE)
            rc = w2l__buf_printf(&b, &e, "%s(%d, %s)", names[k], (int)f->transform.param, col);
        else rc = w2l__buf_printf(&b, &e, "%s(%s)", names[k], col);
        if (rc != W2L_OK) break;
    }
    if (w2l__buf_cstr(&b, &e) != W2L_OK) {
        w2l_buf_release(&b);
        return NULL;
    }
    return b.data ? (char *)b.data : w2l__strdup("");
}

int w2l__ice_spec_same(const w2l__ice_spec *a, const w2l__ice_spec *b)
{
    size_t na = a ? a->nfields : 0, nb = b ? b->nfields : 0;
    if (na != nb) return 0;
    for (size_t i = 0; i < na; i++) {
        const w2l__ice_pfield *x = &a->fields[i], *y = &b->fields[i];
        if (x->source_id != y->source_id || x->transform.kind != y->transform.kind ||
            x->transform.param != y->transform.param)
            return 0;
    }
    return 1;
}

/* ---- partition-by clauses (Spark and Trino DDL) ----
 *
 * clause  := blank | element (',' element)*
 * element := column | name '(' arg [',' arg] ')'
 * arg     := column | digits
 * column  := bare | '`' (char | '``')* '`' | '"' (char | '""')* '"'
 * bare    := one or more of A-Z a-z 0-9 _ $ and bytes >= 0x80 (UTF-8)
 * Whitespace may stand between any two tokens. A bare arg of digits only is a number.
 * Example: "Bucket(16, `Id`), days(ts)" -> bucket[16] of id (id_bucket, 1000), day of ts
 * (ts_day, 1001). */

typedef struct pb_parser {
    const char *text;
    size_t pos;
    w2l_error *err;
} pb_parser;

/* One argument: a column name (fresh memory) or a number (name NULL). */
typedef struct pb_arg {
    char *name;
    int64_t num; /* saturates at INT64_MAX; negative when written with '-' */
    size_t at, len;
} pb_arg;

/* A parsed element, kept to check the later ones against it. */
typedef struct pb_item {
    char *col; /* as resolved (schema spelling) or as written */
    int32_t source_id;
    w2l__ice_transform t;
    size_t at, len;
} pb_item;

static int bare_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c >= 0x80;
}

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

static int same_ci(const char *a, const char *b)
{
    for (; *a && lower((unsigned char)*a) == lower((unsigned char)*b); a++, b++) {}
    return lower((unsigned char)*a) == lower((unsigned char)*b);
}

static void skip_blanks(pb_parser *p)
{
    while (is_blank((unsigned char)p->text[p->pos])) p->pos++;
}

/* W2L_SCHEMA: "partition-by 'CLAUSE': WHAT at offset N". */
static w2l_rc __attribute__((format(printf, 3, 4)))
pb_fail(const pb_parser *p, size_t at, const char *fmt, ...)
{
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t n = strlen(p->text);
    return w2l__fail(p->err, W2L_SCHEMA, "partition-by '%.*s%s': %s at offset %zu",
                     (int)W2L_MIN(n, 120), p->text, n > 120 ? "..." : "", what, at);
}

/* What stands at the parser's position, for "found ..." in messages. */
static const char *pb_found(const pb_parser *p, char *buf, size_t size)
{
    const char *s = p->text + p->pos;
    if (!*s) return "the end";
    size_t n = 1;
    while (bare_char((unsigned char)s[0]) && bare_char((unsigned char)s[n]) && n < 32) n++;
    snprintf(buf, size, "'%.*s'", (int)n, s);
    return buf;
}

/* A quoted name at the parser's position (an opening ` or "); doubled quotes stand for one. */
static w2l_rc pb_quoted(pb_parser *p, char **out)
{
    size_t at = p->pos;
    char q = p->text[p->pos++];
    w2l_buf b = {0};
    for (;;) {
        const char *s = p->text + p->pos, *e = strchr(s, q);
        if (!e) {
            w2l_buf_release(&b);
            return pb_fail(p, at, "quoted name without its closing %c", q);
        }
        int twice = e[1] == q;
        if (w2l_buf_append(&b, s, (size_t)(e - s) + (size_t)twice, p->err) != W2L_OK) {
            w2l_buf_release(&b);
            return W2L_NOMEM;
        }
        p->pos = (size_t)(e - p->text) + 1 + (size_t)twice;
        if (!twice) break;
    }
    if (!b.len) {
        w2l_buf_release(&b);
        return pb_fail(p, at, "empty quoted name");
    }
    if (w2l__buf_cstr(&b, p->err) != W2L_OK) {
        w2l_buf_release(&b);
        return W2L_NOMEM;
    }
    *out = (char *)b.data;
    return W2L_OK;
}

/* A column name or (digits; sign allowed, for the message) a number. what names the
 * expected token for the error when there is neither. */
static w2l_rc pb_arg_read(pb_parser *p, pb_arg *a, const char *what)
{
    char fb[48];
    memset(a, 0, sizeof *a);
    a->at = p->pos;
    const char *s = p->text + p->pos;
    if (*s == '`' || *s == '"') {
        W2L_TRY(pb_quoted(p, &a->name));
        a->len = p->pos - a->at;
        return W2L_OK;
    }
    size_t n = (*s == '-' || *s == '+') ? 1 : 0, digits = 0;
    while (s[n + digits] >= '0' && s[n + digits] <= '9') digits++;
    if (digits && !bare_char((unsigned char)s[n + digits])) {
        for (size_t i = 0; i < digits; i++)
            a->num = a->num > (INT64_MAX - 9) / 10 ? INT64_MAX : a->num * 10 + (s[n + i] - '0');
        if (*s == '-') a->num = -a->num;
        p->pos += n + digits;
        a->len = n + digits;
        return W2L_OK;
    }
    if (n) return pb_fail(p, a->at, "expected a number after '%c'", *s);
    while (bare_char((unsigned char)s[n])) n++;
    if (!n) return pb_fail(p, a->at, "expected %s, found %s", what, pb_found(p, fb, sizeof fb));
    a->name = w2l__strndup(s, n);
    W2L_NOMEM_IF(!a->name, p->err);
    p->pos += n;
    a->len = n;
    return W2L_OK;
}

static const struct {
    const char *name;
    w2l__ice_tkind kind;
} pb_transforms[] = {
    {"identity", W2L_ICE_T_IDENTITY}, {"bucket", W2L_ICE_T_BUCKET},
    {"truncate", W2L_ICE_T_TRUNCATE}, {"year", W2L_ICE_T_YEAR},
    {"years", W2L_ICE_T_YEAR},        {"month", W2L_ICE_T_MONTH},
    {"months", W2L_ICE_T_MONTH},      {"day", W2L_ICE_T_DAY},
    {"days", W2L_ICE_T_DAY},          {"date", W2L_ICE_T_DAY},
    {"hour", W2L_ICE_T_HOUR},         {"hours", W2L_ICE_T_HOUR},
    {"date_hour", W2L_ICE_T_HOUR},
};

/* One element: the transform and its column (fresh, in *col). */
static w2l_rc pb_element(pb_parser *p, w2l__ice_transform *t, pb_arg *col)
{
    char fb[48];
    pb_arg head, args[2];
    size_t nargs = 0;
    W2L_TRY(pb_arg_read(p, &head, "a column or a transform"));
    int quoted = p->text[head.at] == '`' || p->text[head.at] == '"';
    skip_blanks(p);
    if (p->text[p->pos] != '(') {
        if (!head.name) return pb_fail(p, head.at, "a number is not a column");
        *t = (w2l__ice_transform){W2L_ICE_T_IDENTITY, 0};
        *col = head;
        return W2L_OK;
    }
    if (quoted || !head.name) {
        w2l__free(head.name);
        return pb_fail(p, head.at, "'%.*s' is not a transform", (int)head.len,
                       p->text + head.at);
    }
    size_t k = 0;
    while (k < W2L_ARRAY_LEN(pb_transforms) && !same_ci(head.name, pb_transforms[k].name)) k++;
    w2l__free(head.name);
    if (k == W2L_ARRAY_LEN(pb_transforms))
        return pb_fail(p, head.at,
                       "unknown transform '%.*s' (known: identity, bucket, truncate, year(s), "
                       "month(s), day(s), hour(s), date, date_hour)",
                       (int)W2L_MIN(head.len, 64), p->text + head.at);
    t->kind = pb_transforms[k].kind;
    t->param = 0;
    p->pos++; /* '(' */
    w2l_rc rc = W2L_OK;
    for (;;) {
        skip_blanks(p);
        pb_arg a;
        if (!p->text[p->pos]) {
            rc = pb_fail(p, p->pos, "missing ')'");
            break;
        }
        if ((rc = pb_arg_read(p, &a, "a column or a number")) != W2L_OK) break;
        if (nargs == 2) {
            w2l__free(a.name);
            rc = pb_fail(p, a.at, "%s takes at most 2 arguments", pb_transforms[k].name);
            break;
        }
        args[nargs++] = a;
        skip_blanks(p);
        char c = p->text[p->pos];
        if (c == ',') {
            p->pos++;
            continue;
        }
        if (c == ')') {
            p->pos++;
            break;
        }
        rc = c ? pb_fail(p, p->pos, "expected ',' or ')', found %s", pb_found(p, fb, sizeof fb))
               : pb_fail(p, p->pos, "missing ')'");
        break;
    }
    const char *tn = pb_transforms[k].name;
    int two = t->kind == W2L_ICE_T_BUCKET || t->kind == W2L_ICE_T_TRUNCATE;
    size_t ncols = 0, ci = 0, ni = 0;
    for (size_t i = 0; i < nargs; i++) {
        if (args[i].name) ncols++, ci = i;
        else ni = i;
    }
    if (rc == W2L_OK && !two && (nargs != 1 || ncols != 1))
        rc = pb_fail(p, head.at, "%s takes one column, as in %s(ts)", tn, tn);
    else if (rc == W2L_OK && two && (nargs != 2 || ncols != 1))
        rc = pb_fail(p, head.at, "%s takes a number and a column, as in %s(16, id) or %s(id, 16)",
                     tn, tn, tn);
    else if (rc == W2L_OK && two && (args[ni].num < 1 || args[ni].num > INT32_MAX))
        rc = pb_fail(p, args[ni].at, "%s '%.*s' is not a positive 32-bit integer",
                     t->kind == W2L_ICE_T_BUCKET ? "bucket count" : "truncate width",
                     (int)W2L_MIN(args[ni].len, 40), p->text + args[ni].at);
    if (rc == W2L_OK) {
        if (two) t->param = (int32_t)args[ni].num;
        *col = args[ci];
        args[ci].name = NULL;
    }
    for (size_t i = 0; i < nargs; i++) w2l__free(args[i].name);
    return rc;
}

/* The schema field named name: the exact spelling first, else the only one that matches
 * without regard to case; -1 when none (or several) do. */
static long pb_field(const w2l_schema *s, const char *name, int *ambiguous)
{
    long i = w2l_schema_index_of_name(s, name), hit = -1;
    *ambiguous = 0;
    if (i >= 0) return i;
    for (size_t k = 0; k < w2l_schema_field_count(s); k++)
        if (same_ci(w2l_schema_field(s, k)->name, name)) {
            if (hit >= 0) *ambiguous = 1;
            hit = (long)k;
        }
    return *ambiguous ? -1 : hit;
}

static int is_time_transform(w2l__ice_tkind k)
{
    return k == W2L_ICE_T_YEAR || k == W2L_ICE_T_MONTH || k == W2L_ICE_T_DAY ||
           k == W2L_ICE_T_HOUR;
}

/* Resolves and names element n (items[n], its transform parsed, and col) into fields[n],
 * and checks it against the ones before it. Takes col->name into items[n].col. */
static w2l_rc pb_add(pb_parser *p, const w2l_schema *schema, pb_item *items,
                     w2l__ice_pfield *fields, size_t n, pb_arg *col)
{
    static const char *suffix[] = {"", "_bucket", "_trunc", "_year", "_month", "_day", "_hour"};
    pb_item *it = &items[n];
    w2l__ice_pfield *f = &fields[n];
    const char *el = p->text + it->at;
    int elen = (int)W2L_MIN(it->len, 120);
    it->col = col->name;
    col->name = NULL;
    f->transform = it->t;
    f->source_id = 0;
    f->type = (w2l_type){W2L_TYPE_INT, 0, 0};
    if (schema) {
        int amb;
        long i = pb_field(schema, it->col, &amb);
        if (i < 0)
            return pb_fail(p, col->at, "%s column '%s' in '%.*s'",
                           amb ? "ambiguous (differs only in case)" : "unknown", it->col, elen,
                           el);
        const w2l_field *sf = w2l_schema_field(schema, (size_t)i);
        w2l_error e;
        if (w2l__ice_transform_result(it->t, sf->type, &f->type, &e) != W2L_OK) {
            char tb[32], sb[32];
            w2l__ice_transform_format(it->t, tb, sizeof tb);
            return pb_fail(p, it->at, "'%.*s': %s does not apply to column '%s' of type %s",
                           elen, el, tb, sf->name, w2l_type_format(sf->type, sb, sizeof sb));
        }
        f->source_id = sf->id;
        if (strcmp(sf->name, it->col) != 0) {
            char *c = w2l__strdup(sf->name);
            W2L_NOMEM_IF(!c, p->err);
            w2l__free(it->col);
            it->col = c;
        }
    }
    it->source_id = f->source_id;
    for (size_t k = 0; k < n; k++) {
        const pb_item *o = &items[k];
        int same_col = schema ? o->source_id == it->source_id : same_ci(o->col, it->col);
        if (!same_col) continue;
        if (o->t.kind == it->t.kind && o->t.param == it->t.param)
            return pb_fail(p, it->at, "duplicate field: '%.*s' repeats '%.*s'", elen, el,
                           (int)W2L_MIN(o->len, 120), p->text + o->at);
        if (is_time_transform(o->t.kind) && is_time_transform(it->t.kind))
            return pb_fail(p, it->at,
                           "'%.*s' and '%.*s' are redundant: one time transform per column", elen,
                           el, (int)W2L_MIN(o->len, 120), p->text + o->at);
    }
    f->name = it->t.kind == W2L_ICE_T_IDENTITY
                  ? w2l__strdup(it->col)
                  : w2l__asprintf("%s%s", it->col, suffix[it->t.kind]);
    W2L_NOMEM_IF(!f->name, p->err);
    /* names are unique in a spec and, but for identity, differ from the schema's columns
     * (as Iceberg's reference implementation checks when it builds a spec) */
    for (size_t k = 0; k < n; k++)
        if (strcmp(fields[k].name, f->name) == 0)
            return pb_fail(p, it->at, "duplicate partition name '%s' ('%.*s' and '%.*s')",
                           f->name, (int)W2L_MIN(items[k].len, 120), p->text + items[k].at, elen,
                           el);
    if (schema && it->t.kind != W2L_ICE_T_IDENTITY &&
        w2l_schema_index_of_name(schema, f->name) >= 0)
        return pb_fail(p, it->at, "partition name '%s' of '%.*s' is a column of the table",
                       f->name, elen, el);
    return W2L_OK;
}

w2l_rc w2l__ice_spec_parse(const char *text, const w2l_schema *schema, w2l__ice_spec *out,
                           w2l_error *err)
{
    memset(out, 0, sizeof *out);
    pb_parser p = {text ? text : "", 0, err};
    w2l__ice_spec s = {0};
    pb_item *items = NULL;
    size_t cap = 0;
    w2l_rc rc = W2L_OK;
    skip_blanks(&p);
    while (p.text[p.pos]) {
        char fb[48];
        if (p.text[p.pos] == ',') {
            rc = pb_fail(&p, p.pos, "empty element before ','");
            break;
        }
        if (s.nfields == cap) {
            size_t nc = cap ? cap * 2 : 4;
            w2l__ice_pfield *nf = w2l__realloc(s.fields, nc * sizeof *nf);
            if (nf) s.fields = nf;
            pb_item *ni = nf ? w2l__realloc(items, nc * sizeof *ni) : NULL;
            if (ni) items = ni;
            if (!nf || !ni) {
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            cap = nc;
        }
        pb_item *it = &items[s.nfields];
        memset(it, 0, sizeof *it);
        memset(&s.fields[s.nfields], 0, sizeof *s.fields);
        pb_arg col = {0};
        it->at = p.pos;
        if ((rc = pb_element(&p, &it->t, &col)) != W2L_OK) break;
        it->len = p.pos - it->at;
        rc = pb_add(&p, schema, items, s.fields, s.nfields, &col);
        w2l__free(col.name);
        s.fields[s.nfields].field_id = 1000 + (int32_t)s.nfields;
        s.nfields++; /* items[n] and fields[n] hold memory to free either way */
        if (rc != W2L_OK) break;
        skip_blanks(&p);
        char c = p.text[p.pos];
        if (c == ',') {
            p.pos++;
            skip_blanks(&p);
            if (!p.text[p.pos]) {
                rc = pb_fail(&p, p.pos, "empty element after the last ','");
                break;
            }
        } else if (c) {
            rc = pb_fail(&p, p.pos, "expected ',' or the end, found %s",
                         pb_found(&p, fb, sizeof fb));
            break;
        }
    }
    for (size_t i = 0; i < s.nfields; i++) w2l__free(items[i].col);
    w2l__free(items);
    if (rc != W2L_OK) {
        w2l__ice_spec_release(&s);
        return rc;
    }
    if (!s.nfields) {
        w2l__free(s.fields);
        s.fields = NULL;
    }
    *out = s;
    return W2L_OK;
}

/* Human-readable partition value, as Spark/Java name partition directories. */
static size_t format_pvalue(const w2l__ice_pfield *f, const w2l_value *v, char *buf, size_t size)
{
    if (!v || v->is_null) return (size_t)snprintf(buf, size, "null");
    int64_t y;
    unsigned m, d;
    switch (f->transform.kind) {
    case W2L_ICE_T_YEAR:
        return (size_t)snprintf(buf, size, "%04lld", (long long)v->v.i32 + 1970);
    case W2L_ICE_T_MONTH:
        return (size_t)snprintf(buf, size, "%04d-%02d", (int)(w2l__floor_div(v->v.i32, 12) + 1970),
                                (int)w2l__floor_mod(v->v.i32, 12) + 1);
    case W2L_ICE_T_HOUR: {
        int64_t days = w2l__floor_div(v->v.i32, 24);
        w2l__civil_from_days(days, &y, &m, &d);
        return (size_t)snprintf(buf, size, "%04d-%02u-%02u-%02d", (int)y, m, d,
                                (int)w2l__floor_mod(v->v.i32, 24));
    }
    default: return w2l_value_format(f->type, v, buf, size);
    }
}

char *w2l__ice_partition_path(const w2l__ice_spec *spec, const w2l_value *values)
{
    w2l_buf b = {0};
    w2l_error e;
    char val[256];
    for (size_t i = 0; spec && i < spec->nfields; i++) {
        const w2l__ice_pfield *f = &spec->fields[i];
        format_pvalue(f, &values[i], val, sizeof val);
        if (i && w2l_buf_append(&b, "/", 1, &e) != W2L_OK) goto oom;
        const char *parts[2] = {f->name, val};
        for (int k = 0; k < 2; k++) {
            if (k && w2l_buf_append(&b, "=", 1, &e) != W2L_OK) goto oom;
            for (const char *p = parts[k]; *p; p++) {
                unsigned char c = (unsigned char)*p;
                int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
                if (plain ? w2l_buf_append(&b, p, 1, &e) != W2L_OK
                          : w2l__buf_printf(&b, &e, "%%%02X", c) != W2L_OK)
                    goto oom;
            }
        }
    }
    if (w2l__buf_cstr(&b, &e) != W2L_OK) goto oom;
    if (!b.data) return w2l__strdup("");
    return (char *)b.data;
oom:
    w2l_buf_release(&b);
    return NULL;
}
