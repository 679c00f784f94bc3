/*
 * Parquet page headers (parquet.thrift PageHeader, DataPageHeader, DictionaryPageHeader),
 * written and parsed with the Thrift compact protocol. A page on disk is
 *   page := PageHeader(compact struct) body(compressed_page_size bytes)
 * and the body of a v1 data page, before compression, is
 *   body := [le32(def_len) def-levels(RLE hybrid, width 1)]   only for optional columns
 *           values                                            PLAIN or RLE_DICTIONARY
 *   RLE_DICTIONARY values := bit-width(1 byte) indices(RLE hybrid)
 * Example header, a dictionary page of 2 entries, 12 bytes, uncompressed (13 bytes):
 *   15 04 | 15 18 | 15 18 | 4c 15 04 15 00 00 | 00   (type 2; sizes 12, 12; field 7 =
 *   DictionaryPageHeader{num_values 2, encoding PLAIN}; stop).
 */
#include "pq_int.h"

w2l_rc w2l__pq_page_header_write(const w2l__pq_page_header *h, w2l_buf *out, w2l_error *err)
{
    w2l__tc_writer w;
    w2l__tc_writer_init(&w, out, err);
    w2l__tc_struct_begin(&w);
    w2l__tc_field_i32(&w, 1, h->type);
    w2l__tc_field_i32(&w, 2, h->uncompressed_size);
    w2l__tc_field_i32(&w, 3, h->compressed_size);
    if (h->type == PQ_PAGE_DATA) {
        w2l__tc_field_struct(&w, 5);
        w2l__tc_field_i32(&w, 1, h->num_values);
        w2l__tc_field_i32(&w, 2, h->encoding);
        w2l__tc_field_i32(&w, 3, h->def_encoding);
        w2l__tc_field_i32(&w, 4, h->rep_encoding);
        w2l__tc_struct_end(&w);
    } else if (h->type == PQ_PAGE_DICTIONARY) {
        w2l__tc_field_struct(&w, 7);
        w2l__tc_field_i32(&w, 1, h->num_values);
        w2l__tc_field_i32(&w, 2, h->encoding);
        w2l__tc_struct_end(&w);
    }
    w2l__tc_struct_end(&w);
    return w.rc;
}

static int32_t read_i32(w2l__tc_reader *r, int t) { return (int32_t)w2l__tc_read_int(r, t); }

static void read_data_header(w2l__tc_reader *r, w2l__pq_page_header *h, unsigned *seen)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        switch (id) {
        case 1: h->num_values = read_i32(r, t); *seen |= 1u << 8; break;
        case 2: h->encoding = read_i32(r, t); break;
        case 3: h->def_encoding = read_i32(r, t); break;
        case 4: h->rep_encoding = read_i32(r, t); break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

static void read_dict_header(w2l__tc_reader *r, w2l__pq_page_header *h, unsigned *seen)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        switch (id) {
        case 1: h->num_values = read_i32(r, t); *seen |= 1u << 8; break;
        case 2: h->encoding = read_i32(r, t); break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

static void read_v2_header(w2l__tc_reader *r, w2l__pq_page_header *h, unsigned *seen)
{
    if (!w2l__tc_enter(r)) return;
    int16_t last = 0, id;
    int t;
    h->is_compressed = 1;
    while (w2l__tc_next_field(r, &last, &t, &id)) {
        switch (id) {
        case 1: h->num_values = read_i32(r, t); *seen |= 1u << 8; break;
        case 2: h->num_nulls = read_i32(r, t); break;
        case 3: h->num_rows = read_i32(r, t); break;
        case 4: h->encoding = read_i32(r, t); break;
        case 5: h->def_len = read_i32(r, t); break;
        case 6: h->rep_len = read_i32(r, t); break;
        case 7: h->is_compressed = w2l__tc_read_bool(r, t); break;
        default: w2l__tc_skip(r, t);
        }
    }
    w2l__tc_leave(r);
}

w2l_rc w2l__pq_page_header_read(const uint8_t *p, size_t n, w2l__pq_page_header *h,
                                size_t *used, w2l_error *err)
{
    memset(h, 0, sizeof *h);
    h->type = -1;
    w2l__tc_reader r;
    w2l__tc_reader_init(&r, p, n, "page header", err);
    unsigned seen = 0;
    int16_t last = 0, id;
    int t;
    while (w2l__tc_next_field(&r, &last, &t, &id)) {
        switch (id) {
        case 1: h->type = read_i32(&r, t); seen |= 1; break;
        case 2: h->uncompressed_size = read_i32(&r, t); seen |= 2; break;
        case 3: h->compressed_size = read_i32(&r, t); seen |= 4; break;
        case 5:
            if (t != TC_STRUCT) { w2l__tc_corrupt(&r, "data_page_header is not a struct"); break; }
            read_data_header(&r, h, &seen);
            break;
        case 7:
            if (t != TC_STRUCT) {
                w2l__tc_corrupt(&r, "dictionary_page_header is not a struct");
                break;
            }
            read_dict_header(&r, h, &seen);
            break;
        case 8:
            if (t != TC_STRUCT) {
                w2l__tc_corrupt(&r, "data_page_header_v2 is not a struct");
                break;
            }
            read_v2_header(&r, h, &seen);
            break;
        default: w2l__tc_skip(&r, t);
        }
    }
    if (r.rc != W2L_OK) return r.rc;
    if ((seen & 7) != 7)
        return w2l__fail(err, W2L_CORRUPT, "page header: type or sizes missing");
    if (h->uncompressed_size < 0 || h->compressed_size < 0 || h->num_values < 0)
        return w2l__fail(err, W2L_CORRUPT, "page header: negative size or count");
    if ((h->type == PQ_PAGE_DATA || h->type == PQ_PAGE_DICTIONARY ||
         h->type == PQ_PAGE_DATA_V2) && !(seen & (1u << 8)))
        return w2l__fail(err, W2L_CORRUPT, "page header: page of type %d without its header",
                         h->type);
    *used = (size_t)(r.p - r.base);
    return W2L_OK;
}
