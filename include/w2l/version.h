/*
 * libwholedb2lake: version of the headers and of the library actually linked.
 * W2L_API marks every exported symbol; the library builds with -fvisibility=hidden.
 */
#ifndef W2L_VERSION_H
#define W2L_VERSION_H

#define W2L_VERSION_MAJOR 0
#define W2L_VERSION_MINOR 1
#define W2L_VERSION_PATCH 0
#define W2L_VERSION_STRING "0.1.0"
#define W2L_VERSION_NUMBER \
    (W2L_VERSION_MAJOR * 10000 + W2L_VERSION_MINOR * 100 + W2L_VERSION_PATCH)

#if defined(__GNUC__) && __GNUC__ >= 4
#define W2L_API __attribute__((visibility("default")))
#else
#define W2L_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version number of the library actually linked (W2L_VERSION_NUMBER at its build).
 * Thread-safe. See w2l_version_number(3). */
W2L_API unsigned w2l_version_number(void);

/* The same as a static string, e.g. "0.1.0". Never NULL. See w2l_version_number(3). */
W2L_API const char *w2l_version_string(void);

#ifdef __cplusplus
}
#endif
#endif
