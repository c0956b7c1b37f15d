#include "util/number_format.h"

#include <inttypes.h>
#include <stdio.h>

const char *dfg_format_ratio(uint64_t numerator, uint64_t denominator,
                             int decimals, char *buf, size_t size)
{
    if (denominator == 0) {
        snprintf(buf, size, "n/a");
        return buf;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    /* Long division one digit at a time: the remainder stays below the
     * denominator, so nothing overflows for any realistic byte count. */
    uint64_t whole = numerator / denominator;
    uint64_t remainder = numerator % denominator;
    uint64_t fraction = 0, scale = 1;
    for (int i = 0; i < decimals; i++) {
        remainder *= 10;
        fraction = fraction * 10 + remainder / denominator;
        remainder %= denominator;
        scale *= 10;
    }
    if (remainder * 2 >= denominator) {
        fraction++;
        if (fraction == scale) {
            fraction = 0;
            whole++;
        }
    }
    if (decimals == 0)
        snprintf(buf, size, "%" PRIu64, whole);
    else
        snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64, whole, decimals,
                 fraction);
    return buf;
}

const char *dfg_format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024) {
        snprintf(buf, size, "%" PRIu64 " B", bytes);
        return buf;
    }
    int unit = 0;
    uint64_t divisor = 1024;
    while (unit < 4 && bytes / divisor >= 1024) {
        divisor *= 1024;
        unit++;
    }
    char number[40];
    snprintf(buf, size, "%s %s",
             dfg_format_ratio(bytes, divisor, 2, number, sizeof number),
             units[unit]);
    return buf;
}

const char *dfg_format_count(uint64_t count, char *buf, size_t size)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, count);
    size_t at = 0;
    for (int i = 0; i < n && at + 1 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0 && at + 2 < size)
            buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}
