/* status.c - what a status code means, and the version: an object of
 * their own, so that a firmware links their text only when it asks. */
#include "nanoprof/nanoprof.h"

const char *np_version(void)
{
    return NP_VERSION_STRING;
}

const char *np_strerror(int status)
{
    switch (status) {
    case NP_OK: return "success";
    case NP_EINVAL: return "invalid argument";
    case NP_ESMALL: return "buffer too small";
    case NP_EALREADY: return "already initialised on this thread";
    case NP_ENOTINIT: return "not initialised on this thread";
    case NP_EFULL: return "table full, results incomplete";
    case NP_EBUSY: return "busy: called from inside a hook";
    default: return "unknown status";
    }
}
