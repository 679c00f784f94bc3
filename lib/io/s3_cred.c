/*
 * AWS credentials for the "s3" file IO, found in the order AWS tools use:
 *   1. environment: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY [, AWS_SESSION_TOKEN];
 *   2. the profile (opts, else AWS_PROFILE, else "default") in the shared credentials file
 *      (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials, "[NAME]" sections) and the
 *      config file (AWS_CONFIG_FILE, else ~/.aws/config, "[profile NAME]" and "[default]");
 *      the credentials file wins a key both have. INI: '#' and ';' start comment lines,
 *      blanks around '=' are dropped, key names are case-insensitive;
 *   3. EC2 instance metadata, IMDSv2: PUT /latest/api/token, then the role name from
 *      /latest/meta-data/iam/security-credentials/ and its credentials (flat JSON) from
 *      .../<role>, both with the token header. These expire; w2l__cred_get fetches them
 *      again when less than 5 minutes are left.
 * Secrets and tokens never go into an error message or a log line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "../common/thread.h"
#include "s3.h"

#define IMDS_DEFAULT "http://169.254.169.254"
#define REFRESH_MS (5 * 60 * 1000)

enum { SRC_ENV, SRC_PROFILE, SRC_IMDS };

struct w2l__cred_chain {
    mtx_t mu;
    w2l__http *http;
    char *imds_endpoint;
    int source;
    char where[1100];
    w2l__aws_cred cred;
    char *region;
};

void w2l__aws_cred_clear(w2l__aws_cred *c)
{
    if (!c) return;
    /* secrets do not stay in freed memory */
    if (c->secret_key) memset(c->secret_key, 0, strlen(c->secret_key));
    if (c->session_token) memset(c->session_token, 0, strlen(c->session_token));
    w2l__free(c->access_key);
    w2l__free(c->secret_key);
    w2l__free(c->session_token);
    memset(c, 0, sizeof *c);
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static w2l_rc set_cred(w2l__aws_cred *c, const char *ak, const char *sk, const char *tok,
                       int64_t expires_ms, w2l_error *err)
{
    w2l__aws_cred n = {w2l__strdup(ak), w2l__strdup(sk), tok ? w2l__strdup(tok) : NULL,
                       expires_ms};
    if (!n.access_key || !n.secret_key || (tok && !n.session_token)) {
        w2l__aws_cred_clear(&n);
        return w2l__fail(err, W2L_NOMEM, "credentials: out of memory");
    }
    w2l__aws_cred_clear(c);
    *c = n;
    return W2L_OK;
}

/* ---- profile files ---------------------------------------------------------------- */

typedef struct profile {
    char *ak, *sk, *token, *region;
    int found_in_creds, found_in_config;
} profile;

static void profile_clear(profile *p)
{
    w2l__aws_cred c = {p->ak, p->sk, p->token, 0};
    w2l__aws_cred_clear(&c);
    w2l__free(p->region);
    memset(p, 0, sizeof *p);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = '\0';
    return s;
}

/* Reads the section of profile name from the INI file at path into p (keys already set by
 * an earlier file stay). config: sections are "[profile NAME]" (and "[default]").
 * *read_ok is 0 when the file cannot be opened (why says so), which is no error. */
static w2l_rc read_profile(const char *path, const char *name, int config, profile *p,
                           int *read_ok, char *why, size_t whysize, w2l_error *err)
{
    *read_ok = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, whysize, "%s", strerror(errno));
        return W2L_OK;
    }
    *read_ok = 1;
    char line[4096];
    int in = 0, lineno = 0;
    w2l_rc rc = W2L_OK;
    while (rc == W2L_OK && fgets(line, sizeof line, f)) {
        lineno++;
        char *s = trim(line);
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == '\n') s[--n] = '\0', s = trim(s), n = strlen(s);
        if (n == 0 || s[0] == '#' || s[0] == ';') continue;
        if (s[0] == '[') {
            char *close = strchr(s, ']');
            in = 0;
            if (!close) continue;
            *close = '\0';
            char *sec = trim(s + 1);
            if (config) {
                if (strncmp(sec, "profile", 7) == 0 && (sec[7] == ' ' || sec[7] == '\t'))
                    sec = trim(sec + 8);
                else if (strcmp(sec, "default") != 0)
                    continue; /* "[NAME]" other than default means nothing in config */
            }
            if (strcmp(sec, name) == 0) {
                in = 1;
                if (config) p->found_in_config = 1;
                else p->found_in_creds = 1;
            }
            continue;
        }
        if (!in) continue;
        char *eq = strchr(s, '=');
        if (!eq) continue;
        *eq = '\0';
        char *key = trim(s), *val = trim(eq + 1);
        char **slot = NULL;
        if (strcasecmp(key, "aws_access_key_id") == 0) slot = &p->ak;
        else if (strcasecmp(key, "aws_secret_access_key") == 0) slot = &p->sk;
        else if (strcasecmp(key, "aws_session_token") == 0) slot = &p->token;
        else if (strcasecmp(key, "region") == 0) slot = &p->region;
        if (!slot || *slot || !*val) continue;
        *slot = w2l__strdup(val);
        if (!*slot) rc = w2l__fail(err, W2L_NOMEM, "credentials: out of memory reading %s", path);
    }
    memset(line, 0, sizeof line);
    fclose(f);
    return rc;
}

/* ---- instance metadata (IMDSv2) ----------------------------------------------------- */

/* The JSON string value at *pp (just past its opening quote) into a fresh string (escapes
 * decoded), *pp moved past the closing quote. NULL on a malformed string or no memory. */
static char *json_string(const char **pp, const char *end)
{
    const char *p = *pp;
    w2l_buf b = {0};
    w2l_error e;
    int ok = 0;
    while (p < end) {
        char c = *p++;
        if (c == '"') {
            ok = 1;
            break;
        }
        char o[4];
        size_t k = 1;
        o[0] = c;
        if (c == '\\') {
            if (p >= end) break;
            char x = *p++;
            switch (x) {
            case 'n': o[0] = '\n'; break;
            case 't': o[0] = '\t'; break;
            case 'r': o[0] = '\r'; break;
            case 'b': o[0] = '\b'; break;
            case 'f': o[0] = '\f'; break;
            case 'u': {
                if (end - p < 4) goto done;
                unsigned cp = 0;
                for (int i = 0; i < 4; i++) {
                    char h = p[i];
                    cp <<= 4;
                    if (h >= '0' && h <= '9') cp |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') cp |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') cp |= (unsigned)(h - 'A' + 10);
                    else goto done;
                }
                p += 4;
                if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD; /* pairs: not in these fields */
                if (cp < 0x80) o[0] = (char)cp;
                else if (cp < 0x800) {
                    o[0] = (char)(0xC0 | (cp >> 6));
                    o[1] = (char)(0x80 | (cp & 0x3F));
                    k = 2;
                } else {
                    o[0] = (char)(0xE0 | (cp >> 12));
                    o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    o[2] = (char)(0x80 | (cp & 0x3F));
                    k = 3;
                }
                break;
            }
            default: o[0] = x; break; /* \" \\ \/ */
            }
        }
        if (w2l_buf_append(&b, o, k, &e) != W2L_OK) break;
    }
done:
    if (!ok || w2l__buf_cstr(&b, &e) != W2L_OK) {
        if (b.data) memset(b.data, 0, b.cap);
        w2l_buf_release(&b);
        return NULL;
    }
    *pp = p;
    return (char *)b.data;
}

typedef struct imds_json {
    char *ak, *sk, *token, *expiration;
} imds_json;

static void imds_json_clear(imds_json *j)
{
    w2l__aws_cred c = {j->ak, j->sk, j->token, 0};
    w2l__aws_cred_clear(&c);
    w2l__free(j->expiration);
    memset(j, 0, sizeof *j);
}

/* The flat JSON object IMDS answers with: the four string members we need; others are
 * stepped over. 0 when it is not such an object. */
static int parse_imds_json(const char *s, size_t n, imds_json *j)
{
    const char *p = s, *end = s + n;
#define WS() while (p < end && isspace((unsigned char)*p)) p++
    WS();
    if (p >= end || *p++ != '{') return 0;
    for (;;) {
        WS();
        if (p < end && *p == '}') return 1;
        if (p >= end || *p++ != '"') return 0;
        char *key = json_string(&p, end);
        if (!key) return 0;
        WS();
        if (p >= end || *p++ != ':') {
            w2l__free(key);
            return 0;
        }
        WS();
        if (p < end && *p == '"') {
            p++;
            char *val = json_string(&p, end);
            if (!val) {
                w2l__free(key);
                return 0;
            }
            char **slot = strcmp(key, "AccessKeyId") == 0       ? &j->ak
                          : strcmp(key, "SecretAccessKey") == 0 ? &j->sk
                          : strcmp(key, "Token") == 0           ? &j->token
                          : strcmp(key, "Expiration") == 0      ? &j->expiration
                                                                : NULL;
            if (slot && !*slot) *slot = val;
            else {
                memset(val, 0, strlen(val));
                w2l__free(val);
            }
        } else {
            /* a number, true, false or null: flat, so it ends at ',' or '}' */
            while (p < end && *p != ',' && *p != '}') {
                if (*p == '{' || *p == '[' || *p == '"') {
                    w2l__free(key);
                    return 0;
                }
                p++;
            }
        }
        w2l__free(key);
        WS();
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '}') return 1;
        return 0;
    }
#undef WS
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* "2026-12-01T18:00:00Z" (fractional seconds and a "+hh:mm" offset allowed) -> ms since the
 * epoch; -1 when malformed. */
static int64_t parse_iso8601(const char *s)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || h < 0 ||
        mi < 0 || sec < 0)
        return -1;
    const char *p = s + n;
    int64_t frac_ms = 0;
    if (*p == '.') {
        int64_t scale = 100;
        for (p++; isdigit((unsigned char)*p); p++, scale /= 10) frac_ms += (*p - '0') * scale;
    }
    int64_t off_s = 0;
    if (*p == 'Z') p++;
    else if (*p == '+' || *p == '-') {
        int oh, om, k = 0;
        if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5) return -1;
        off_s = (oh * 3600 + om * 60) * (*p == '+' ? 1 : -1);
        p += 6;
    } else return -1;
    if (*p) return -1;
    int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    return ((days * 86400 + h * 3600 + mi * 60 + sec) - off_s) * 1000 + frac_ms;
}

static w2l_rc imds_call(w2l__cred_chain *c, const char *method, const char *path,
                        const w2l__http_header *h, w2l_buf *out, w2l__http_resp *resp,
                        w2l_error *err)
{
    char *url = w2l__asprintf("%s%s", c->imds_endpoint, path);
    W2L_NOMEM_IF(!url, err);
    out->len = 0;
    w2l__http_req req = {.method = method, .url = url, .headers = h, .nheaders = 1,
                         .out = out, .max_out = 64 * 1024, .timeout_ms = 2000,
                         .connect_timeout_ms = 1000};
    w2l_rc rc = w2l__http_do(c->http, &req, resp, err);
    w2l__free(url);
    return rc;
}

/* Fetches credentials from instance metadata into c->cred. W2L_NOTFOUND with what IMDS
 * answered in why (never a token or secret) when it has none. */
static w2l_rc imds_fetch(w2l__cred_chain *c, char *why, size_t whysize, w2l_error *err)
{
    w2l_buf b = {0};
    w2l__http_resp resp;
    char *token = NULL, *role = NULL;
    imds_json j = {0};
    const char *path = "/latest/api/token";
    w2l__http_header th = {"X-aws-ec2-metadata-token-ttl-seconds", "21600"};
    w2l_rc rc = imds_call(c, "PUT", path, &th, &b, &resp, err);
    if (rc != W2L_OK) goto out;
#define FAIL_ANSWER(what)                                                                    \
    do {                                                                                     \
        if (resp.transport_error) snprintf(why, whysize, "%s: %s", path, resp.error);        \
        else snprintf(why, whysize, "%s answered HTTP %ld%s", path, resp.status, what);      \
        rc = W2L_NOTFOUND;                                                                   \
        goto out;                                                                            \
    } while (0)
    if (resp.transport_error || resp.status != 200 || b.len == 0) FAIL_ANSWER("");
    token = w2l__strndup((const char *)b.data, b.len);
    if (!token) {
        rc = w2l__fail(err, W2L_NOMEM, "credentials: out of memory");
        goto out;
    }
    token[strcspn(token, "\r\n")] = '\0';
    w2l__http_header tok = {"X-aws-ec2-metadata-token", token};

    path = "/latest/meta-data/iam/security-credentials/";
    rc = imds_call(c, "GET", path, &tok, &b, &resp, err);
    if (rc != W2L_OK) goto out;
    if (resp.transport_error || resp.status != 200) {
        FAIL_ANSWER(resp.status == 404 ? " (no IAM role attached to the instance)" : "");
    }
    size_t rl = 0;
    while (rl < b.len && b.data[rl] != '\n' && b.data[rl] != '\r') rl++;
    for (size_t i = 0; i < rl; i++) {
        unsigned char ch = b.data[i];
        if (!isalnum(ch) && !strchr("+=,.@_-", ch)) rl = 0; /* IAM role name characters */
    }
    if (rl == 0) FAIL_ANSWER(" with no usable role name");
    role = w2l__strndup((const char *)b.data, rl);
    char *rpath = role ? w2l__asprintf("%s%s", path, role) : NULL;
    if (!rpath) {
        rc = w2l__fail(err, W2L_NOMEM, "credentials: out of memory");
        goto out;
    }
    rc = imds_call(c, "GET", rpath, &tok, &b, &resp, err);
    w2l__free(rpath);
    path = "/latest/meta-data/iam/security-credentials/<role>";
    if (rc != W2L_OK) goto out;
    if (resp.transport_error || resp.status != 200) FAIL_ANSWER("");
    if (!parse_imds_json((const char *)b.data, b.len, &j) || !j.ak || !j.sk)
        FAIL_ANSWER(" without AccessKeyId and SecretAccessKey in JSON");
    int64_t exp = 0;
    if (j.expiration && (exp = parse_iso8601(j.expiration)) < 0)
        FAIL_ANSWER(" with an Expiration that is not ISO 8601");
#undef FAIL_ANSWER
    rc = set_cred(&c->cred, j.ak, j.sk, j.token, exp, err);
    if (rc == W2L_OK)
        snprintf(c->where, sizeof c->where, "instance metadata (role %s)", role);
out:
    if (token) {
        memset(token, 0, strlen(token));
        w2l__free(token);
    }
    w2l__free(role);
    imds_json_clear(&j);
    if (b.data) memset(b.data, 0, b.cap);
    w2l_buf_release(&b);
    return rc;
}

static int imds_off(const w2l__cred_opts *o)
{
    const char *v = getenv("AWS_EC2_METADATA_DISABLED");
    return (o && o->imds_disabled) || (v && strcasecmp(v, "true") == 0);
}

/* ---- the chain ---------------------------------------------------------------------- */

void w2l__cred_chain_free(w2l__cred_chain *c)
{
    if (!c) return;
    w2l__aws_cred_clear(&c->cred);
    w2l__free(c->imds_endpoint);
    w2l__free(c->region);
    mtx_destroy(&c->mu);
    w2l__free(c);
}

/* The file path from env var, else $HOME/<rel>, into out; 0 when neither is set. */
static int file_path(const char *var, const char *rel, char *out, size_t size)
{
    const char *v = env(var), *home = env("HOME");
    if (v) snprintf(out, size, "%s", v);
    else if (home) snprintf(out, size, "%s/%s", home, rel);
    else return 0;
    return 1;
}

static w2l_rc resolve(w2l__cred_chain *c, const w2l__cred_opts *o, w2l_error *err)
{
    /* 1. environment */
    const char *ak = env("AWS_ACCESS_KEY_ID"), *sk = env("AWS_SECRET_ACCESS_KEY");
    if ((ak != NULL) != (sk != NULL))
        return w2l__fail(err, W2L_CONFIG, "credentials: %s is set but %s is not",
                         ak ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                         ak ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");

    /* 2. profile files (read even when the environment has keys: they give the region) */
    const char *name = o && o->profile && *o->profile ? o->profile : env("AWS_PROFILE");
    int named = name != NULL;
    if (!name) name = "default";
    char cpath[1024], gpath[1024], cwhy[128] = "", gwhy[128] = "";
    int has_c = file_path("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", cpath, sizeof cpath);
    int has_g = file_path("AWS_CONFIG_FILE", ".aws/config", gpath, sizeof gpath);
    if (!has_c) snprintf(cpath, sizeof cpath, "~/.aws/credentials (HOME not set)");
    if (!has_g) snprintf(gpath, sizeof gpath, "~/.aws/config (HOME not set)");
    profile p = {0};
    int rc_ok = 0, rg_ok = 0;
    w2l_rc rc = W2L_OK;
    if (has_c) rc = read_profile(cpath, name, 0, &p, &rc_ok, cwhy, sizeof cwhy, err);
    if (rc == W2L_OK && has_g)
        rc = read_profile(gpath, name, 1, &p, &rg_ok, gwhy, sizeof gwhy, err);
    if (rc != W2L_OK) goto out;
    if (p.region) {
        c->region = w2l__strdup(p.region);
        if (!c->region) {
            rc = w2l__fail(err, W2L_NOMEM, "credentials: out of memory");
            goto out;
        }
    }
    if (ak) {
        rc = set_cred(&c->cred, ak, sk, env("AWS_SESSION_TOKEN"), 0, err);
        c->source = SRC_ENV;
        snprintf(c->where, sizeof c->where, "environment");
        goto out;
    }
    if (named && !p.found_in_creds && !p.found_in_config) {
        rc = w2l__fail(err, W2L_CONFIG,
                       "credentials: profile '%s' is in neither %s (%s) nor %s (%s)", name,
                       cpath, rc_ok ? "read" : has_c ? cwhy : "not set", gpath,
                       rg_ok ? "read" : has_g ? gwhy : "not set");
        goto out;
    }
    if ((p.ak != NULL) != (p.sk != NULL)) {
        rc = w2l__fail(err, W2L_CONFIG, "credentials: profile '%s' in %s has %s but not %s",
                       name, p.found_in_creds ? cpath : gpath,
                       p.ak ? "aws_access_key_id" : "aws_secret_access_key",
                       p.ak ? "aws_secret_access_key" : "aws_access_key_id");
        goto out;
    }
    if (p.ak) {
        rc = set_cred(&c->cred, p.ak, p.sk, p.token, 0, err);
        c->source = SRC_PROFILE;
        int from_creds = p.found_in_creds;
        snprintf(c->where, sizeof c->where, "profile %.60s in %.1000s", name,
                 from_creds ? cpath : gpath);
        goto out;
    }

    /* 3. instance metadata */
    char iwhy[400];
    if (imds_off(o)) snprintf(iwhy, sizeof iwhy, "disabled");
    else if (!c->http) snprintf(iwhy, sizeof iwhy, "no HTTP client");
    else {
        rc = imds_fetch(c, iwhy, sizeof iwhy, err);
        if (rc == W2L_OK) {
            c->source = SRC_IMDS;
            goto out;
        }
        if (rc != W2L_NOTFOUND) goto out;
    }
    rc = w2l__fail(err, W2L_NOTFOUND,
                   "no AWS credentials: environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY "
                   "not set); profile '%s' in %s (%s) and %s (%s); instance metadata %s (%s)",
                   name, cpath,
                   !rc_ok ? (has_c ? cwhy : "not set")
                   : p.found_in_creds ? "no aws_access_key_id" : "no such section",
                   gpath,
                   !rg_ok ? (has_g ? gwhy : "not set")
                   : p.found_in_config ? "no aws_access_key_id" : "no such section",
                   c->imds_endpoint, iwhy);
out:
    profile_clear(&p);
    return rc;
}

w2l_rc w2l__cred_chain_new(const w2l__cred_opts *o, w2l__http *http, w2l__cred_chain **out,
                           w2l_error *err)
{
    *out = NULL;
    w2l__cred_chain *c = w2l__calloc(1, sizeof *c);
    W2L_NOMEM_IF(!c, err);
    if (mtx_init(&c->mu, mtx_plain) != thrd_success) {
        w2l__free(c);
        return w2l__fail(err, W2L_ERROR, "credentials: mtx_init failed");
    }
    c->http = http;
    const char *ep = o && o->imds_endpoint && *o->imds_endpoint ? o->imds_endpoint : IMDS_DEFAULT;
    size_t n = strlen(ep);
    while (n > 0 && ep[n - 1] == '/') n--;
    c->imds_endpoint = w2l__strndup(ep, n);
    if (!c->imds_endpoint) {
        w2l__cred_chain_free(c);
        return w2l__fail(err, W2L_NOMEM, "credentials: out of memory");
    }
    w2l_rc rc = resolve(c, o, err);
    if (rc != W2L_OK) {
        w2l__cred_chain_free(c);
        return rc;
    }
    w2l__log(W2L_LOG_DEBUG, "credentials from %s", c->where);
    *out = c;
    return W2L_OK;
}

w2l_rc w2l__cred_get(w2l__cred_chain *c, w2l__aws_cred *out, const char **where,
                     w2l_error *err)
{
    memset(out, 0, sizeof *out);
    if (!c) return w2l__fail(err, W2L_MISUSE, "w2l__cred_get: NULL chain");
    mtx_lock(&c->mu);
    w2l_rc rc = W2L_OK;
    int64_t now = w2l__now_ms();
    if (c->source == SRC_IMDS && c->cred.expires_ms && now >= c->cred.expires_ms - REFRESH_MS) {
        char why[400];
        rc = imds_fetch(c, why, sizeof why, err);
        if (rc == W2L_NOTFOUND) {
            if (now < c->cred.expires_ms) {
                /* the old ones still work for a while; try again on the next call */
                w2l__log(W2L_LOG_WARN, "credentials: refresh from %s failed (%s); "
                         "using the current ones until they expire", c->imds_endpoint, why);
                rc = W2L_OK;
            } else {
                rc = w2l__fail(err, W2L_UNAVAILABLE,
                               "credentials from instance metadata %s expired and could not "
                               "be refreshed: %s", c->imds_endpoint, why);
                if (err) err->flags |= W2L_ERR_RETRIABLE;
            }
        } else if (rc == W2L_OK && c->cred.expires_ms && now >= c->cred.expires_ms) {
            rc = w2l__fail(err, W2L_UNAVAILABLE,
                           "credentials from instance metadata %s: refreshed ones have "
                           "already expired", c->imds_endpoint);
        }
    }
    if (rc == W2L_OK)
        rc = set_cred(out, c->cred.access_key, c->cred.secret_key, c->cred.session_token,
                      c->cred.expires_ms, err);
    if (rc == W2L_OK && where) *where = c->where;
    mtx_unlock(&c->mu);
    return rc;
}

const char *w2l__cred_region(w2l__cred_chain *c) { return c ? c->region : NULL; }
