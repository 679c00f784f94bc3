/*
 * The "mysql" source's URI and configuration: the mysql:// URI and its parameters over
 * the source.* conf keys (among them TLS, the server's RSA key for caching_sha2_password,
 * and the snapshot's lock), and which databases and tables are selected.
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>

#include "mysql_source_int.h"

/* ---- small helpers ---- */

void w2l__ms_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int w2l__ms_hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static int pct_decode(const char *s, size_t n, char *out, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int hi = w2l__ms_hexval(s[i + 1]), lo = w2l__ms_hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            c = (char)(hi << 4 | lo);
            i += 2;
        }
        if (k + 1 >= size) return -1;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

void w2l__ms_free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) w2l__free(v[i]);
    w2l__free(v);
}

/* ---- URI and configuration ---- */

/* The auth and TLS settings, URI parameter or conf key (without "source."). */
static w2l_rc set_auth(mysql_source *ms, const char *k, const char *val, int *handled,
                       w2l_error *err)
{
    char **dst = NULL;
    *handled = 1;
    if (!strcmp(k, "ssl-mode")) {
        static const char *const modes[] = {"disabled", "required", "verify-ca",
                                            "verify-identity"};
        for (int i = 0; i < 4; i++)
            if (!strcmp(val, modes[i])) {
                ms->cfg.params.tls = i; /* W2L__MY_TLS_* in this order */
                return W2L_OK;
            }
        return w2l__fail(err, W2L_CONFIG,
                         "mysql source: ssl-mode '%.40s' is not disabled, required, verify-ca or "
                         "verify-identity",
                         val);
    }
    if (!strcmp(k, "get-server-public-key")) {
        int on = !strcmp(val, "true") || !strcmp(val, "1") || !strcmp(val, "yes") ||
                 !strcmp(val, "on");
        if (!on && strcmp(val, "false") && strcmp(val, "0") && strcmp(val, "no") &&
            strcmp(val, "off"))
            return w2l__fail(err, W2L_CONFIG,
                             "mysql source: get-server-public-key '%.40s' is not true or false",
                             val);
        ms->cfg.params.get_server_public_key = on;
        return W2L_OK;
    }
    if (!strcmp(k, "snapshot-lock")) {
        if (!strcmp(val, "auto")) ms->cfg.snapshot_lock = SNAP_LOCK_AUTO;
        else if (!strcmp(val, "none")) ms->cfg.snapshot_lock = SNAP_LOCK_NONE;
        else if (!strcmp(val, "ftwrl")) ms->cfg.snapshot_lock = SNAP_LOCK_FTWRL;
        else
            return w2l__fail(err, W2L_CONFIG,
                             "mysql source: snapshot-lock '%.40s' is not auto, none or ftwrl", val);
        return W2L_OK;
    }
    if (!strcmp(k, "password-file")) dst = &ms->cfg.password_file;
    else if (!strcmp(k, "ssl-ca")) dst = &ms->cfg.ssl_ca;
    else if (!strcmp(k, "ssl-cert")) dst = &ms->cfg.ssl_cert;
    else if (!strcmp(k, "ssl-key")) dst = &ms->cfg.ssl_key;
    else if (!strcmp(k, "server-public-key")) dst = &ms->cfg.server_public_key;
    if (!dst) {
        *handled = 0;
        return W2L_OK;
    }
    w2l__free(*dst);
    *dst = *val ? w2l__strdup(val) : NULL;
    W2L_NOMEM_IF(*val && !*dst, err);
    return W2L_OK;
}

static const char *const auth_keys[] = {
    "ssl-mode",   "ssl-ca", "ssl-cert", "ssl-key", "server-public-key", "get-server-public-key",
    "snapshot-lock", "password-file"};

/* The source.* conf keys of set_auth; URI parameters given later win. */
static w2l_rc auth_from_conf(mysql_source *ms, const w2l_conf *conf, w2l_error *err)
{
    for (size_t i = 0; conf && i < sizeof auth_keys / sizeof auth_keys[0]; i++) {
        char key[64];
        const char *v = NULL;
        int handled;
        snprintf(key, sizeof key, "source.%s", auth_keys[i]);
        if (!w2l_conf_is_set(conf, key)) continue;
        if (!strcmp(auth_keys[i], "get-server-public-key")) {
            int64_t b;
            if (w2l_conf_get_int(conf, key, &b, NULL) == W2L_OK) v = b ? "true" : "false";
        } else if (w2l_conf_get(conf, key, &v, NULL) != W2L_OK)
            v = NULL;
        if (v) W2L_TRY(set_auth(ms, auth_keys[i], v, &handled, err));
    }
    return W2L_OK;
}

static w2l_rc set_param(mysql_source *ms, const char *uri, const char *k, size_t kl, const char *v,
                        size_t vl, char **dbs_text, char **tables, char **startup, int64_t *sid,
                        w2l_error *err)
{
    char val[1024];
    if (pct_decode(v, vl, val, sizeof val))
        return w2l__fail(err, W2L_CONFIG, "source URI: bad value of parameter '%.*s'", (int)kl, k);
    char **dst = NULL;
    if (kl == 9 && !memcmp(k, "server-id", 9)) {
        char *e;
        long long x = strtoll(val, &e, 10);
        if (*e || x < 1 || x > 4294967295LL)
            return w2l__fail(err, W2L_CONFIG,
                             "source URI: server-id '%s' is not a number in 1..4294967295", val);
        *sid = x;
        return W2L_OK;
    }
    char name[32];
    if (kl < sizeof name) {
        int handled;
        memcpy(name, k, kl);
        name[kl] = '\0';
        W2L_TRY(set_auth(ms, name, val, &handled, err));
        if (handled) return W2L_OK;
    }
    if (kl == 9 && !memcmp(k, "databases", 9)) dst = dbs_text;
    else if (kl == 6 && !memcmp(k, "tables", 6)) dst = tables;
    else if (kl == 7 && !memcmp(k, "startup", 7)) dst = startup;
    else if ((kl == 15 && !memcmp(k, "connect-timeout", 15)) ||
             (kl == 10 && !memcmp(k, "chunk-rows", 10))) {
        long long x = strtoll(val, NULL, 10);
        if (kl == 10) ms->cfg.chunk_rows = x > 0 ? (size_t)x : SNAP_CHUNK_DEFAULT;
        else ms->cfg.params.connect_timeout_s = x > 0 ? (unsigned)x : 10;
        return W2L_OK;
    } else if (kl == 20 && !memcmp(k, "snapshot-parallelism", 20)) {
        char *e;
        long long x = strtoll(val, &e, 10);
        if (*e || x < 0 || x > 64)
            return w2l__fail(err, W2L_CONFIG,
                             "source URI: snapshot-parallelism '%.40s' is not a number in 0..64",
                             val);
        ms->cfg.snap_parallelism = x;
        return W2L_OK;
    } else if (kl == 14 && !memcmp(k, "time-as-string", 14)) { /* source.time-as-string */
        int on = !strcmp(val, "true") || !strcmp(val, "1");
        if (!on && strcmp(val, "false") && strcmp(val, "0"))
            return w2l__fail(err, W2L_CONFIG,
                             "source URI: time-as-string '%.40s' is not true or false", val);
        ms->cfg.topts.time_as_string = on;
        return W2L_OK;
    } else
        return w2l__fail(
            err, W2L_CONFIG,
            "source URI: unknown parameter '%.*s' (allowed: server-id, databases, tables, startup, "
            "chunk-rows, snapshot-parallelism, connect-timeout, snapshot-lock, password-file, "
            "ssl-mode, ssl-ca, "
            "ssl-cert, ssl-key, server-public-key, get-server-public-key, time-as-string)",
            (int)kl, k);
    (void)uri;
    w2l__free(*dst);
    *dst = w2l__strdup(val);
    W2L_NOMEM_IF(!*dst, err);
    return W2L_OK;
}

/* The password when the URI has none: the file of password-file= (or source.password-file;
 * its first line, without the line end), else the environment's W2L_SOURCE_PASSWORD. The
 * password is never written to a message or log line. */
static w2l_rc password_from_file_or_env(mysql_source *ms, w2l_error *err)
{
    if (ms->cfg.params.pass) {
        if (ms->cfg.password_file)
            w2l__log(W2L_LOG_WARN, "mysql source: the URI holds a password, which wins over "
                                   "password-file (the file is not read)");
        return W2L_OK;
    }
    if (ms->cfg.password_file) {
        const char *path = ms->cfg.password_file;
        FILE *f = fopen(path, "r");
        if (!f)
            return w2l__fail_errno(err, W2L_CONFIG, errno, "mysql source: password-file %.300s",
                                   path);
        char buf[1024];
        size_t n = fread(buf, 1, sizeof buf, f);
        int rerr = ferror(f);
        fclose(f);
        if (rerr || n == sizeof buf) {
            memset(buf, 0, sizeof buf);
            return w2l__fail(err, W2L_CONFIG,
                             "mysql source: password-file %.300s: %s", path,
                             rerr ? "cannot be read" : "longer than 1023 bytes");
        }
        size_t l = 0;
        while (l < n && buf[l] != '\n' && buf[l] != '\r') l++; /* the first line */
        ms->cfg.params.pass = w2l__strndup(buf, l);
        memset(buf, 0, sizeof buf);
        W2L_NOMEM_IF(!ms->cfg.params.pass, err);
        return W2L_OK;
    }
    const char *env = getenv("W2L_SOURCE_PASSWORD");
    if (env) {
        ms->cfg.params.pass = w2l__strdup(env);
        W2L_NOMEM_IF(!ms->cfg.params.pass, err);
    }
    return W2L_OK;
}

/* Parses the URI; the message never repeats the URI (it holds the password). */
w2l_rc w2l__ms_parse_uri(mysql_source *ms, const w2l_conf *conf, const char *uri, w2l_error *err)
{
    if (!uri || strncmp(uri, "mysql://", 8) != 0)
        return w2l__fail(err, W2L_CONFIG,
                         "source URI: expected mysql://USER:PASS@HOST:PORT/?server-id=N&...");
    const char *p = uri + 8;
    const char *slash = p + strcspn(p, "/?");
    const char *at = NULL;
    for (const char *q = p; q < slash; q++)
        if (*q == '@') at = q; /* the last @ before the host */
    char buf[512];
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        size_t ul = colon ? (size_t)(colon - p) : (size_t)(at - p);
        if (pct_decode(p, ul, buf, sizeof buf))
            return w2l__fail(err, W2L_CONFIG, "source URI: bad user name");
        ms->cfg.params.user = w2l__strdup(buf);
        W2L_NOMEM_IF(!ms->cfg.params.user, err);
        if (colon) {
            if (pct_decode(colon + 1, (size_t)(at - colon - 1), buf, sizeof buf))
                return w2l__fail(err, W2L_CONFIG, "source URI: bad password encoding");
            ms->cfg.params.pass = w2l__strdup(buf);
            memset(buf, 0, sizeof buf);
            W2L_NOMEM_IF(!ms->cfg.params.pass, err);
        }
        p = at + 1;
    }
    const char *hend = slash;
    const char *pc = NULL;
    if (*p == '[') { /* [ipv6]:port */
        const char *rb = memchr(p, ']', (size_t)(hend - p));
        if (!rb) return w2l__fail(err, W2L_CONFIG, "source URI: bad host");
        ms->cfg.params.host = w2l__strndup(p + 1, (size_t)(rb - p - 1));
        pc = rb + 1 < hend && rb[1] == ':' ? rb + 1 : NULL;
    } else {
        pc = memchr(p, ':', (size_t)(hend - p));
        ms->cfg.params.host = w2l__strndup(p, (size_t)((pc ? pc : hend) - p));
    }
    W2L_NOMEM_IF(!ms->cfg.params.host, err);
    if (!*ms->cfg.params.host) {
        w2l__free(ms->cfg.params.host);
        ms->cfg.params.host = w2l__strdup("127.0.0.1");
        W2L_NOMEM_IF(!ms->cfg.params.host, err);
    }
    ms->cfg.params.port = 3306;
    if (pc) {
        char *e;
        long port = strtol(pc + 1, &e, 10);
        if (e != hend || port < 1 || port > 65535)
            return w2l__fail(err, W2L_CONFIG, "source URI: bad port");
        ms->cfg.params.port = (unsigned)port;
    }
    if (!ms->cfg.params.user)
        return w2l__fail(err, W2L_CONFIG, "source URI: no user (mysql://USER:PASS@HOST:PORT/)");

    char *dbs_text = NULL, *tables = NULL, *startup = NULL;
    int64_t sid = 0;
    const char *cv;
    if (conf) {
        if (w2l_conf_get(conf, "source.databases", &cv, NULL) == W2L_OK && cv)
            dbs_text = w2l__strdup(cv);
        if (w2l_conf_get(conf, "source.tables", &cv, NULL) == W2L_OK && cv)
            tables = w2l__strdup(cv);
        if (w2l_conf_get(conf, "source.startup", &cv, NULL) == W2L_OK && cv)
            startup = w2l__strdup(cv);
        int64_t v;
        if (w2l_conf_get_int(conf, "source.server-id", &v, NULL) == W2L_OK) sid = v;
    }
    w2l_rc rc = auth_from_conf(ms, conf, err);
    const char *q = strchr(slash, '?');
    while (rc == W2L_OK && q && *q) {
        const char *k = q + 1, *amp = strchr(k, '&'), *end = amp ? amp : k + strlen(k);
        const char *eq = memchr(k, '=', (size_t)(end - k));
        if (end > k) {
            if (!eq)
                rc = w2l__fail(err, W2L_CONFIG, "source URI: parameter '%.*s' without a value",
                               (int)(end - k), k);
            else
                rc = set_param(ms, uri, k, (size_t)(eq - k), eq + 1, (size_t)(end - eq - 1),
                               &dbs_text, &tables, &startup, &sid, err);
        }
        q = amp;
    }
    if (rc == W2L_OK && sid == 0)
        rc = w2l__fail(err, W2L_CONFIG,
                       "mysql source: a replication server id is required (server-id= in the URI "
                       "or source.server-id), unique among the server's replicas and CDC streams");
    ms->cfg.server_id = (uint32_t)sid;
    if (rc == W2L_OK && dbs_text && *dbs_text) {
        for (char *s = dbs_text; rc == W2L_OK && *s;) {
            size_t l = strcspn(s, ",");
            char *d = w2l__strndup(s, l);
            char **nv = d ? w2l__realloc(ms->cfg.dbs, (ms->cfg.ndbs + 1) * sizeof *nv) : NULL;
            if (!nv) {
                w2l__free(d);
                rc = w2l__fail(err, W2L_NOMEM, "out of memory");
                break;
            }
            ms->cfg.dbs = nv;
            ms->cfg.dbs[ms->cfg.ndbs++] = d;
            s += l;
            if (*s) s++;
        }
    }
    if (rc == W2L_OK && tables && *tables) {
        char *anch = w2l__asprintf("^(%s)$", tables);
        if (!anch) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
        else {
            int r = regcomp(&ms->cfg.re, anch, REG_EXTENDED | REG_NOSUB);
            w2l__free(anch);
            if (r)
                rc = w2l__fail(err, W2L_CONFIG,
                               "mysql source: tables '%.200s' is not a valid regular expression",
                               tables);
            else
                ms->cfg.have_regex = 1;
        }
    }
    if (rc == W2L_OK) rc = w2l__tfilter_init(&ms->cfg.filter, conf, err);
    if (rc == W2L_OK) rc = password_from_file_or_env(ms, err);
    ms->cfg.params.tls_ca = ms->cfg.ssl_ca;
    ms->cfg.params.tls_cert = ms->cfg.ssl_cert;
    ms->cfg.params.tls_key = ms->cfg.ssl_key;
    ms->cfg.params.server_public_key = ms->cfg.server_public_key;
    ms->cfg.params.flags |= W2L__MY_PIN_RSA_KEY;
    ms->cfg.startup = startup ? startup : w2l__strdup("initial");
    startup = NULL;
    if (rc == W2L_OK && !ms->cfg.startup) rc = w2l__fail(err, W2L_NOMEM, "out of memory");
    if (rc == W2L_OK) {
        const char *s = ms->cfg.startup;
        if (strcmp(s, "initial") && strcmp(s, "earliest") && strcmp(s, "latest") &&
            strncmp(s, "gtid:", 5) && strncmp(s, "file:", 5))
            rc = w2l__fail(err, W2L_CONFIG,
                           "mysql source: startup '%.100s' is not initial, earliest, latest, "
                           "gtid:STATE or file:NAME:POS",
                           s);
    }
    w2l__free(dbs_text);
    ms->cfg.tables_text = tables; /* the filter a position records (mysql_newtables.c) */
    w2l__free(startup);
    return rc;
}

static int is_system_db(const char *db)
{
    return !strcmp(db, "mysql") || !strcmp(db, "information_schema") ||
           !strcmp(db, "performance_schema") || !strcmp(db, "sys");
}

int w2l__ms_db_selected(const mysql_source *ms, const char *db)
{
    if (!db) return 0;
    if (!ms->cfg.ndbs) return !is_system_db(db);
    for (size_t i = 0; i < ms->cfg.ndbs; i++)
        if (!strcmp(ms->cfg.dbs[i], db)) return 1;
    return 0;
}

int w2l__ms_table_selected(const mysql_source *ms, const char *db, const char *table)
{
    if (!w2l__ms_db_selected(ms, db) || !table) return 0;
    char base[256];
    const char *name = table;
    w2l__osc_kind k = w2l__osc_classify(table, base, sizeof base);
    if (k == W2L_OSC_GHOST_CHANGELOG || k == W2L_OSC_GHOST_OLD || k == W2L_OSC_PTOSC_OLD) return 0;
    if (k != W2L_OSC_NONE) name = base;
    if (!w2l__tfilter_ok(&ms->cfg.filter, db, name)) return 0;
    if (!ms->cfg.have_regex) return 1;
    char full[600];
    snprintf(full, sizeof full, "%s.%s", db, name);
    return regexec(&ms->cfg.re, full, 0, NULL, 0) == 0;
}

void w2l__ms_cfg_free(mysql_source *ms)
{
    w2l__free(ms->cfg.ssl_ca);
    w2l__free(ms->cfg.ssl_cert);
    w2l__free(ms->cfg.ssl_key);
    w2l__free(ms->cfg.server_public_key);
    w2l__free(ms->cfg.password_file);
    ms->cfg.ssl_ca = ms->cfg.ssl_cert = ms->cfg.ssl_key = ms->cfg.server_public_key = NULL;
    ms->cfg.password_file = NULL;
    w2l__ms_free_strv(ms->cfg.dbs, ms->cfg.ndbs);
    ms->cfg.dbs = NULL;
    if (ms->cfg.have_regex) regfree(&ms->cfg.re);
    ms->cfg.have_regex = 0;
    w2l__tfilter_free(&ms->cfg.filter);
    w2l__free(ms->cfg.startup);
    w2l__free(ms->cfg.tables_text);
    ms->cfg.tables_text = NULL;
    w2l__free(ms->cfg.filter_json);
    ms->cfg.filter_json = NULL;
    w2l__free(ms->cfg.params.host);
    w2l__free(ms->cfg.params.user);
    if (ms->cfg.params.pass) {
        memset(ms->cfg.params.pass, 0, strlen(ms->cfg.params.pass));
        w2l__free(ms->cfg.params.pass);
    }
    memset(&ms->cfg.params, 0, sizeof ms->cfg.params);
}
