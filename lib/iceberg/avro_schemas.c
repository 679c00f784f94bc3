/*
 * The Avro schemas of Iceberg manifests and manifest lists, format versions 2 and 3 (v3 adds
 * data_file's first_row_id 142, content_offset 144 and content_size_in_bytes 145, and the
 * manifest list's first_row_id 520; the v2 schemas are unchanged) (Iceberg spec:
 * "Manifests" — the manifest_entry and data_file fields with their field ids, "Manifest
 * Lists" — manifest_file and field_summary, Appendix A "Format-specific Requirements", Avro:
 * optional fields as ["null", T] unions with default null, maps with non-string keys as
 * arrays of key/value records annotated logicalType "map", record names r2, r102, r508 and
 * k<key id>_v<value id>, list element ids in "element-id").
 */
#include <stdio.h>

#include "iceberg.h"
#include "../parquet/parquet.h"

static const char LIST_SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
    "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
    "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,\"field-id\":518},"
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":510},"
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":511}]},"
    "\"element-id\":508}],\"default\":null,\"field-id\":507},"
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":519}]}";

static const char LIST_V3_TAIL[] =
    ",{\"name\":\"first_row_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":520}]}";

const char *w2l__ice_avro_manifest_list_schema(int format_version)
{
    static char v3[sizeof LIST_SCHEMA + sizeof LIST_V3_TAIL];
    static volatile int ready; /* benign race: every thread writes the same bytes */
    if (format_version < 3) return LIST_SCHEMA;
    if (!ready) {
        memcpy(v3, LIST_SCHEMA, sizeof LIST_SCHEMA - 3); /* without the closing "]}" */
        memcpy(v3 + sizeof LIST_SCHEMA - 3, LIST_V3_TAIL, sizeof LIST_V3_TAIL);
        ready = 1;
    }
    return v3;
}

const char *w2l__ice_avro_partition_type(w2l_type t, char *buf, size_t size)
{
    switch (t.id) {
    case W2L_TYPE_BOOLEAN: return "\"boolean\"";
    case W2L_TYPE_INT: return "\"int\"";
    case W2L_TYPE_LONG: return "\"long\"";
    case W2L_TYPE_FLOAT: return "\"float\"";
    case W2L_TYPE_DOUBLE: return "\"double\"";
    case W2L_TYPE_DATE: return "{\"type\":\"int\",\"logicalType\":\"date\"}";
    case W2L_TYPE_TIME: return "{\"type\":\"long\",\"logicalType\":\"time-micros\"}";
    case W2L_TYPE_TIMESTAMP:
        return "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":false}";
    case W2L_TYPE_TIMESTAMPTZ:
        return "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}";
    case W2L_TYPE_STRING: return "\"string\"";
    case W2L_TYPE_BINARY: return "\"bytes\"";
    case W2L_TYPE_DECIMAL: {
        /* fixed, as the spec requires; the name is made unique by the caller's prefix */
        static const unsigned char len[39] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 6, 6, 6, 7,
                                              7, 8, 8, 9, 9, 9, 10, 10, 11, 11, 11, 12, 12, 13,
                                              13, 13, 14, 14, 15, 15, 16, 16, 16};
        snprintf(buf, size,
                 "{\"type\":\"fixed\",\"name\":\"%%s\",\"size\":%u,\"logicalType\":\"decimal\","
                 "\"precision\":%u,\"scale\":%u}",
                 len[t.precision <= 38 ? t.precision : 38], t.precision, t.scale);
        return buf;
    }
    }
    return "\"int\"";
}

static const char ENTRY_HEAD[] =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
    "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},"
    "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":"
    "4},"
    "{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[";

#define MAP(name, id, k, v, kt, vt)                                                          \
    "{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"       \
    "\"record\",\"name\":\"k" #k "_v" #v "\",\"fields\":[{\"name\":\"key\",\"type\":\"" kt   \
    "\",\"field-id\":" #k "},{\"name\":\"value\",\"type\":\"" vt "\",\"field-id\":" #v "}]},"  \
    "\"logicalType\":\"map\"}],\"default\":null,\"field-id\":" #id "},"

/* The data_file fields after the partition, up to sort_order_id, as both versions have them */
#define ENTRY_TAIL_COMMON                                                                     \
    "]},\"field-id\":102},"                                                                  \
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"                         \
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104},"                   \
    MAP("column_sizes", 108, 117, 118, "int", "long")                                        \
    MAP("value_counts", 109, 119, 120, "int", "long")                                        \
    MAP("null_value_counts", 110, 121, 122, "int", "long")                                   \
    MAP("nan_value_counts", 137, 138, 139, "int", "long")                                    \
    MAP("lower_bounds", 125, 126, 127, "int", "bytes")                                       \
    MAP("upper_bounds", 128, 129, 130, "int", "bytes")                                       \
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,\"field-id\":131}," \
    "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","       \
    "\"element-id\":133}],\"default\":null,\"field-id\":132},"                                \
    "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","         \
    "\"element-id\":136}],\"default\":null,\"field-id\":135},"                                \
    "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,\"field-id\":140},"

static const char ENTRY_TAIL[] =
    ENTRY_TAIL_COMMON
    "{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"default\":null,"
    "\"field-id\":143}"
    "]},\"field-id\":2}]}";

/* version 3: first_row_id, and a deletion vector's place in its Puffin file */
static const char ENTRY_TAIL_V3[] =
    ENTRY_TAIL_COMMON
    "{\"name\":\"first_row_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":142},"
    "{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"default\":null,"
    "\"field-id\":143},"
    "{\"name\":\"content_offset\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":144},"
    "{\"name\":\"content_size_in_bytes\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":145}"
    "]},\"field-id\":2}]}";

char *w2l__ice_avro_manifest_schema(const w2l__ice_spec *spec, int format_version)
{
    const char *tail = format_version >= 3 ? ENTRY_TAIL_V3 : ENTRY_TAIL;
    w2l_buf b = {0};
    w2l_error e;
    if (w2l_buf_append(&b, ENTRY_HEAD, sizeof ENTRY_HEAD - 1, &e) != W2L_OK) goto oom;
    for (size_t i = 0; spec && i < spec->nfields; i++) {
        const w2l__ice_pfield *f = &spec->fields[i];
        char tb[256], ft[320];
        const char *t = w2l__ice_avro_partition_type(f->type, tb, sizeof tb);
        if (f->type.id == W2L_TYPE_DECIMAL) {
            char nm[32];
            snprintf(nm, sizeof nm, "fixed_%d", (int)f->field_id);
            snprintf(ft, sizeof ft, tb, nm);
            t = ft;
        }
        char name[256]; /* Avro names are [A-Za-z_][A-Za-z0-9_]*: sanitized as Java does */
        w2l__pq_sanitize_name(f->name, name, sizeof name);
        if (w2l__buf_printf(&b, &e, "%s{\"name\":\"%s\",\"type\":[\"null\",%s],\"default\":null,"
                            "\"field-id\":%d}", i ? "," : "", name, t, (int)f->field_id) != W2L_OK)
            goto oom;
    }
    if (w2l_buf_append(&b, tail, strlen(tail), &e) != W2L_OK ||
        w2l__buf_cstr(&b, &e) != W2L_OK)
        goto oom;
    return (char *)b.data;
oom:
    w2l_buf_release(&b);
    return NULL;
}
