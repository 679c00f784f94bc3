/*
 * Partition transforms and partition values (Iceberg spec: "Partitioning", "Partition
 * Transforms", "Bucket Transform Details", "Truncate Transform Details"; Appendix B for
 * the 32-bit Murmur3 hash). Also the Hive-style partition directory names writers use.
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

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (unsigned char)(v >> (8 * i));
}


/* Days since epoch of a date or timestamp value. */
static int64_t days_of(w2l_type src, const w2l_value *in)
{
    if (src.id == W2L_TYPE_DATE) return in->v.i32;
    return w2l__floor_div(in->v.i64, W2L_MICROS_PER_DAY);
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
        case W2L_TYPE_DATE: put_le(b, (uint64_t)(int64_t)in->v.i32, 8); n = 8; break;
        case W2L_TYPE_STRING:
        case W2L_TYPE_BINARY: p = in->v.bytes.ptr; n = in->v.bytes.len; break;
        case W2L_TYPE_DECIMAL: n = w2l__decimal_to_be_min(in->v.dec, b); break;
        default: put_le(b, (uint64_t)in->v.i64, 8); n = 8; break;
        }
        out->v.i32 = (int32_t)((w2l__ice_murmur3(p, n) & INT32_MAX) % (uint32_t)t.param);
        return W2L_OK;
    }
    case W2L_ICE_T_TRUNCATE: {
        int64_t w = t.param;
        *out = *in;
        switch (src.id) {
        case W2L_TYPE_INT: out->v.i32 = (int32_t)(in->v.i32 - w2l__floor_mod(in->v.i32, w)); break;
        case W2L_TYPE_LONG: out->v.i64 = in->v.i64 - w2l__floor_mod(in->v.i64, w); break;
        case W2L_TYPE_STRING:
            out->v.bytes.len = (size_t)utf8_prefix_len(in->v.bytes.ptr, in->v.bytes.len, t.param);
            break;
        case W2L_TYPE_BINARY: out->v.bytes.len = W2L_MIN(in->v.bytes.len, (size_t)w); break;
        case W2L_TYPE_DECIMAL: {
            int64_t u;
            if (w2l__i128_to_i64(in->v.dec, &u) != 0)
                return w2l__fail(err, W2L_SCHEMA, "truncate of a decimal beyond 64 bits");
            out->v.dec = w2l__i128_from_i64(u - w2l__floor_mod(u, w));
            break;
        }
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

/* Human-readable partition value, as Spark/Java name partition directories. */
static size_t format_pvalue(const w2l__ice_pfield *f, const w2l_value *v, char *buf, size_t size)
{
    if (!v || v->is_null) return (size_t)snprintf(buf, size, "null");
    int64_t y;
    unsigned m, d;
    switch (f->transform.kind) {
    case W2L_ICE_T_YEAR: return (size_t)snprintf(buf, size, "%04d", (int)(v->v.i32 + 1970));
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
