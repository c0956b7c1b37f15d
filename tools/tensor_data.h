/* Seeded random tensor contents and output checksums.
 *
 * Shared by `dfgc run`, `dfgc bench` and the host example
 * (examples/host/, which compiles this file against the installed
 * library): for the same program and seed they fill the same inputs and
 * print the same checksum lines, so their outputs can be compared with
 * diff. Uses the public API only. */
#ifndef DFGC_TENSOR_DATA_H
#define DFGC_TENSOR_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "dfg/dfg.h"

/* Bytes of a tensor (dtype size * elements); 0 for an invalid one. The
 * program validated the sizes already, so no product overflows here. */
size_t dfgc_tensor_bytes(const dfg_tensor_info *info);

/* Fills a tensor from the stream *state (splitmix64): floats uniform in
 * [-1, 1), integers in [0, 4), bools 0 or 1. */
void dfgc_fill_random(const dfg_tensor_info *info, uint64_t *state, void *data);

/* One line: "NAME [d0,d1,...] DTYPE sum=S sumsq=Q hash=H", with the sum
 * and sum of squares of the elements as doubles and a 64-bit FNV-1a hash
 * of the raw bytes. */
void dfgc_print_checksum(FILE *out, const dfg_tensor_info *info,
                         const void *data);

#endif
