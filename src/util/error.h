/* Setting the thread-local error message behind dfg_last_error(). */
#ifndef DFG_ERROR_H
#define DFG_ERROR_H

#include "dfg/status.h"

/* Formats the message, stores it for dfg_last_error() and returns code. */
dfg_status dfg_error(dfg_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Puts "prefix: " in front of the current message, keeping the code. */
dfg_status dfg_error_prefix(dfg_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
