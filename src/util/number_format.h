/* Number formatting for reports and JSON. Integer arithmetic only, so the
 * text never depends on the C locale's decimal point. Each function writes
 * into buf (always NUL-terminated) and returns it. */
#ifndef DFG_NUMBER_FORMAT_H
#define DFG_NUMBER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* numerator / denominator with `decimals` digits after the point (at most
 * 9), rounded half up: "1.2500". "n/a" when the denominator is 0. */
const char *dfg_format_ratio(uint64_t numerator, uint64_t denominator,
                             int decimals, char *buf, size_t size);

/* A byte count in binary units with two decimals: "512 B", "1.50 KiB",
 * "3.25 MiB", "1.00 GiB". */
const char *dfg_format_bytes(uint64_t bytes, char *buf, size_t size);

/* A count with thousands separators: "1,234,567". */
const char *dfg_format_count(uint64_t count, char *buf, size_t size);

#endif
