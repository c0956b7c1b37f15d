/* A merge sort generated for one element type, with the comparison
 * inlined: the planners sort 10^5 keys per plan and a few dozen spans per
 * placement, where qsort's indirect calls dominate the time.
 *
 * DFG_DEFINE_SORT(name, type, less) defines
 *   static void name(type *items, type *scratch, size_t n);
 * which sorts items[0..n) with less(const type *a, const type *b) using
 * scratch (n elements) as working space. O(n log n), stable. */
#ifndef DFG_PLANNER_SORT_H
#define DFG_PLANNER_SORT_H

#include <stddef.h>
#include <string.h>

#define DFG_SORT_RUN 16

#define DFG_DEFINE_SORT(name, type, less)                                   \
    static void name(type *items, type *scratch, size_t n)                  \
    {                                                                       \
        /* Insertion-sorted runs, then merges that double their width. */  \
        for (size_t start = 0; start < n; start += DFG_SORT_RUN) {          \
            size_t end = start + DFG_SORT_RUN < n ? start + DFG_SORT_RUN : n; \
            for (size_t i = start + 1; i < end; i++) {                      \
                type item = items[i];                                       \
                size_t j = i;                                               \
                for (; j > start && less(&item, &items[j - 1]); j--)        \
                    items[j] = items[j - 1];                                \
                items[j] = item;                                            \
            }                                                               \
        }                                                                   \
        type *from = items, *to = scratch;                                  \
        for (size_t width = DFG_SORT_RUN; width < n; width *= 2) {          \
            for (size_t lo = 0; lo < n; lo += 2 * width) {                  \
                size_t mid = lo + width < n ? lo + width : n;               \
                size_t hi = lo + 2 * width < n ? lo + 2 * width : n;        \
                size_t a = lo, b = mid, out = lo;                           \
                while (a < mid && b < hi)                                   \
                    to[out++] = less(&from[b], &from[a]) ? from[b++]        \
                                                         : from[a++];       \
                while (a < mid)                                             \
                    to[out++] = from[a++];                                  \
                while (b < hi)                                              \
                    to[out++] = from[b++];                                  \
            }                                                               \
            type *swap = from;                                              \
            from = to;                                                      \
            to = swap;                                                      \
        }                                                                   \
        if (from != items)                                                  \
            memcpy(items, from, n * sizeof *items);                         \
    }

#endif
