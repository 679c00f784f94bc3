/*
 * "Did you mean": the known name nearest to a mistyped one (w2l_suggest(3)), by edit
 * distance with adjacent transpositions counting as one edit (optimal string alignment),
 * where case and '_' for '-' cost nothing: "incldue" -> "include", "Checkpoint_Interval"
 * -> "checkpoint-interval". A name is only offered when it is close enough to be a slip:
 * at most 1 edit for words of up to 4 characters, 2 up to 8, 3 beyond, and always fewer
 * edits than half the word. Ties go to the first candidate.
 */
#include <ctype.h>
#include <string.h>

#include <w2l/conf.h>

enum { SUGGEST_MAX = 64 }; /* longer words are compared over their first 64 characters */

static int fold(unsigned char c) { return c == '_' ? '-' : tolower(c); }

static size_t min3(size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* The distance between a and b; limit + 1 when their lengths alone differ by more. */
static size_t distance(const char *a, const char *b, size_t limit)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > SUGGEST_MAX) n = SUGGEST_MAX;
    if (m > SUGGEST_MAX) m = SUGGEST_MAX;
    if ((n > m ? n - m : m - n) > limit) return limit + 1;
    size_t d[3][SUGGEST_MAX + 1]; /* rows i-2, i-1 and i, rotating */
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            int same = fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 1]);
            cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1));
            if (i > 1 && j > 1 && fold((unsigned char)a[i - 1]) == fold((unsigned char)b[j - 2]) &&
                fold((unsigned char)a[i - 2]) == fold((unsigned char)b[j - 1]) &&
                pp[j - 2] + 1 < cur[j])
                cur[j] = pp[j - 2] + 1;
        }
    }
    return d[n % 3][m];
}

const char *w2l_suggest(const char *word, const char *const *candidates, size_t n)
{
    if (!word || !*word || !candidates) return NULL;
    size_t len = strlen(word);
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    if (limit > (len - 1) / 2) limit = (len - 1) / 2; /* fewer than half the word */
    const char *best = NULL;
    size_t bd = limit + 1;
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i]) continue;
        size_t d = distance(word, candidates[i], limit);
        if (d == 0) return candidates[i];
        if (d < bd) {
            bd = d;
            best = candidates[i];
        }
    }
    return bd <= limit ? best : NULL;
}
