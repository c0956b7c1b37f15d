#include "cli_number.h"

#include <errno.h>
#include <stdlib.h>
#include "cli.h"

int dfgc_parse_u64(const char *command, const char *option, const char *text,
                   uint64_t min, uint64_t max, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    /* strtoull accepts "-1" as a huge value; only plain digits are wanted. */
    if (text[0] < '0' || text[0] > '9' || errno || *end || value < min ||
        value > max)
        return dfgc_usage_error(command, "%s wants an integer from %llu to "
                                "%llu, not '%s'", option,
                                (unsigned long long)min,
                                (unsigned long long)max, text);
    *out = value;
    return 0;
}
