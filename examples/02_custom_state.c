/*
 * 02_custom_state: plug a checkpoint-state store of your own into the library through its
 * method table (w2l_state_methods(3)), as a host service that keeps state in its own
 * system would. This one keeps everything in one file, rewritten atomically at each seal
 * through the library's own file IO; the core only ever calls it through the wrappers.
 *
 *   02_custom_state DIR
 *
 * Runs two checkpoint rounds, "restarts" by reopening the store, and checks that the newest
 * sealed checkpoint and its values survived, while the unsealed round did not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <w2l.h>

/* The store: a list of (ckpt, key, value) lines "ckpt\tkey\tvalue\n"; values are text here
 * to keep the example short (a real store would length-prefix binary values). */
typedef struct file_store {
    w2l_state base;     /* first member: the core casts between the two */
    w2l_fileio *io;
    char path[512];
    w2l_buf pending;    /* lines of checkpoints not yet sealed */
    w2l_buf sealed;     /* content of the file: "sealed N\n" then lines */
    uint64_t latest;
} file_store;

static w2l_rc fs_load(file_store *fs, w2l_error *err)
{
    void *data;
    size_t len;
    w2l_rc rc = w2l_fileio_read_all(fs->io, fs->path, &data, &len, err);
    if (rc == W2L_NOTFOUND) return W2L_OK;
    if (rc != W2L_OK) return rc;
    unsigned long long n;
    if (sscanf(data, "sealed %llu\n", &n) != 1) {
        w2l_free(data);
        return w2l_error_set(err, W2L_CORRUPT, "%s: no 'sealed' header", fs->path);
    }
    fs->latest = n;
    rc = w2l_buf_append(&fs->sealed, data, len, err);
    w2l_free(data);
    return rc;
}

static w2l_rc fs_open(const w2l_state_methods *m, const w2l_conf *conf, const char *uri,
                      w2l_state *self, w2l_error *err)
{
    (void)m;
    file_store *fs = (file_store *)self;
    if (!uri || !*uri) return w2l_error_set(err, W2L_CONFIG, "expected onefile:PATH");
    snprintf(fs->path, sizeof fs->path, "%s", uri);
    w2l_rc rc = w2l_fileio_open("local", conf, &fs->io, err);
    if (rc == W2L_OK) rc = fs_load(fs, err);
    if (rc != W2L_OK) w2l_fileio_close(fs->io);
    return rc;
}

static w2l_rc fs_put(w2l_state *self, uint64_t ckpt, const char *key, const void *val, size_t len,
                     w2l_error *err)
{
    file_store *fs = (file_store *)self;
    char head[300];
    int n = snprintf(head, sizeof head, "%llu\t%s\t", (unsigned long long)ckpt, key);
    w2l_rc rc = w2l_buf_append(&fs->pending, head, (size_t)n, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&fs->pending, val, len, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&fs->pending, "\n", 1, err);
    return rc;
}

/* Finds the last line for (ckpt, key) in buf. */
static const char *find_line(const w2l_buf *b, uint64_t ckpt, const char *key, size_t *vlen)
{
    char head[300];
    int n = snprintf(head, sizeof head, "%llu\t%s\t", (unsigned long long)ckpt, key);
    const char *found = NULL, *p = (const char *)b->data, *end = p + b->len;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;
        if ((size_t)(nl - p) >= (size_t)n && memcmp(p, head, (size_t)n) == 0) {
            found = p + n;
            *vlen = (size_t)(nl - found);
        }
        p = nl + 1;
    }
    return found;
}

static w2l_rc fs_get(w2l_state *self, uint64_t ckpt, const char *key, w2l_buf *out, w2l_error *err)
{
    file_store *fs = (file_store *)self;
    size_t len = 0;
    const char *v = find_line(&fs->pending, ckpt, key, &len);
    if (!v) v = find_line(&fs->sealed, ckpt, key, &len);
    if (!v)
        return w2l_error_set(err, W2L_NOTFOUND, "no %s in checkpoint %llu", key,
                             (unsigned long long)ckpt);
    return w2l_buf_append(out, v, len, err);
}

static w2l_rc fs_keys(w2l_state *self, uint64_t ckpt, const char *prefix,
                      int (*fn)(void *, const char *), void *ctx, w2l_error *err)
{
    (void)self, (void)ckpt, (void)prefix, (void)fn, (void)ctx, (void)err;
    return W2L_OK; /* not needed by this example */
}

/* Seal: write the file anew with the sealed checkpoint's lines, atomically replacing it. */
static w2l_rc fs_seal(w2l_state *self, uint64_t ckpt, w2l_error *err)
{
    file_store *fs = (file_store *)self;
    w2l_buf next = {0};
    char head[64];
    int n = snprintf(head, sizeof head, "sealed %llu\n", (unsigned long long)ckpt);
    w2l_rc rc = w2l_buf_append(&next, head, (size_t)n, err);
    if (rc == W2L_OK) rc = w2l_buf_append(&next, fs->pending.data, fs->pending.len, err);
    if (rc == W2L_OK)
        rc = w2l_fileio_write_all(fs->io, fs->path, W2L_CREATE_REPLACE, next.data, next.len, err);
    if (rc != W2L_OK) {
        w2l_buf_release(&next);
        return rc;
    }
    w2l_buf_release(&fs->sealed);
    fs->sealed = next;
    fs->pending.len = 0;
    fs->latest = ckpt;
    return W2L_OK;
}

static w2l_rc fs_latest(w2l_state *self, uint64_t *ckpt, w2l_error *err)
{
    file_store *fs = (file_store *)self;
    *ckpt = fs->latest;
    return fs->latest ? W2L_OK : w2l_error_set(err, W2L_NOTFOUND, "no sealed checkpoint");
}

static w2l_rc fs_prune(w2l_state *self, uint64_t keep_from, w2l_error *err)
{
    (void)self, (void)keep_from, (void)err;
    return W2L_OK; /* the file only ever holds the latest checkpoint */
}

static void fs_close(w2l_state *self)
{
    file_store *fs = (file_store *)self;
    w2l_buf_release(&fs->pending);
    w2l_buf_release(&fs->sealed);
    w2l_fileio_close(fs->io);
}

static const w2l_state_methods onefile_methods = {
    .version = W2L_STATE_METHODS_V1,
    .name = "onefile",
    .size = sizeof(file_store),
    .open = fs_open,
    .put = fs_put,
    .get = fs_get,
    .keys = fs_keys,
    .seal = fs_seal,
    .latest = fs_latest,
    .prune = fs_prune,
    .close = fs_close,
};

#define CHECK(call)                                                              \
    do {                                                                         \
        if ((call) != W2L_OK) {                                                  \
            fprintf(stderr, "02_custom_state: %s: %s\n", #call, err.msg);        \
            return 1;                                                            \
        }                                                                        \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: 02_custom_state DIR\n");
        return 2;
    }
    w2l_error err;
    CHECK(w2l_global_init(&err));
    CHECK(w2l_state_register(&onefile_methods, 0));
    char uri[600];
    snprintf(uri, sizeof uri, "onefile:%s/state.txt", argv[1]);

    w2l_state *st;
    CHECK(w2l_state_open(uri, NULL, &st, &err));
    const char *pos1 = "{\"file\":\"binlog.000001\",\"pos\":1234}";
    const char *pos2 = "{\"file\":\"binlog.000001\",\"pos\":9999}";
    CHECK(w2l_state_put(st, 1, "source/position", pos1, strlen(pos1), &err));
    CHECK(w2l_state_seal(st, 1, &err));
    CHECK(w2l_state_put(st, 2, "source/position", pos2, strlen(pos2), &err));
    /* crash here: checkpoint 2 was never sealed */
    w2l_state_close(st);

    CHECK(w2l_state_open(uri, NULL, &st, &err));
    uint64_t ckpt;
    CHECK(w2l_state_latest(st, &ckpt, &err));
    w2l_buf pos = {0};
    CHECK(w2l_state_get(st, ckpt, "source/position", &pos, &err));
    printf("restart from checkpoint %llu at %.*s\n", (unsigned long long)ckpt, (int)pos.len,
           (char *)pos.data);
    int ok = ckpt == 1 && pos.len == strlen(pos1) && memcmp(pos.data, pos1, pos.len) == 0;
    w2l_buf_release(&pos);
    w2l_state_close(st);
    w2l_global_cleanup();
    return ok ? 0 : 1;
}
