/*
 * status.c — status strings and the thread-local last-error message. Messages are
 * truncated to the buffer, never allocated, so reporting an error cannot itself fail.
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/internal.h"

static _Thread_local char last_error[512];

static const char *const status_strings[] = {
    [FCONV_OK] = "success",
    [FCONV_EINVAL] = "invalid argument",
    [FCONV_EUNSUPPORTED] = "unsupported by the requested algorithm or device",
    [FCONV_ENOMEM] = "out of memory",
    [FCONV_EWORKSPACE] = "workspace too small",
    [FCONV_ENODEVICE] = "device not available",
    [FCONV_EOVERFLOW] = "size too large",
    [FCONV_EINTERNAL] = "internal error",
};
_Static_assert(sizeof status_strings / sizeof status_strings[0] == FCONV_EINTERNAL + 1,
               "every fconv_status needs a string");

const char *fconv_strerror(fconv_status status) {
    if ((unsigned)status < sizeof status_strings / sizeof status_strings[0] &&
        status_strings[status])
        return status_strings[status];
    return "unknown status";
}

const char *fconv_last_error(void) { return last_error; }

void fconv_clear_error(void) { last_error[0] = '\0'; }

fconv_status fconv_fail(fconv_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
