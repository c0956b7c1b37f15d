/* Parsing numeric option values for dfgc's subcommands. */
#ifndef DFGC_CLI_NUMBER_H
#define DFGC_CLI_NUMBER_H

#include <stdint.h>

/* A decimal integer in [min, max]. Returns 0, or prints a usage error
 * naming the command and option and returns DFGC_EXIT_USAGE. */
int dfgc_parse_u64(const char *command, const char *option, const char *text,
                   uint64_t min, uint64_t max, uint64_t *out);

#endif
