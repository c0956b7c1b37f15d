#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DFG_ERROR_CAPACITY 2048

static _Thread_local char error_message[DFG_ERROR_CAPACITY];

const char *dfg_last_error(void) { return error_message; }

dfg_status dfg_error(dfg_status code, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vsnprintf(error_message, sizeof error_message, fmt, args);
    va_end(args);
    return code;
}

dfg_status dfg_error_prefix(dfg_status code, const char *fmt, ...)
{
    char previous[DFG_ERROR_CAPACITY];
    memcpy(previous, error_message, sizeof previous);
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(error_message, sizeof error_message, fmt, args);
    va_end(args);
    if (n < 0 || (size_t)n + 2 >= sizeof error_message)
        return code;
    /* Copied by hand: snprintf of the whole previous message into the
     * remaining room would be flagged (rightly) as a possible truncation. */
    size_t used = (size_t)n;
    error_message[used++] = ':';
    error_message[used++] = ' ';
    size_t room = sizeof error_message - used - 1;
    size_t len = strnlen(previous, room);
    memcpy(error_message + used, previous, len);
    error_message[used + len] = '\0';
    return code;
}

const char *dfg_status_name(dfg_status status)
{
    static const char *const names[] = {
        "DFG_OK", "DFG_ERR_INVALID_ARGUMENT", "DFG_ERR_SHAPE",
        "DFG_ERR_DTYPE", "DFG_ERR_UNSUPPORTED", "DFG_ERR_OUT_OF_MEMORY",
        "DFG_ERR_OVERFLOW", "DFG_ERR_IO", "DFG_ERR_FORMAT",
        "DFG_ERR_NOT_FOUND", "DFG_ERR_DEVICE", "DFG_ERR_PLAN",
        "DFG_ERR_INTERNAL", "DFG_ERR_NOT_FINITE",
    };
    if ((unsigned)status >= sizeof names / sizeof names[0])
        return "DFG_ERR_?";
    return names[status];
}

const char *dfg_version(void) { return DFG_VERSION_STRING; }
