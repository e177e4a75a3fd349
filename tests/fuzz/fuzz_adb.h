/*
 * fuzz_adb.h: what the ADB targets (fuzz_adb_packet.c, fuzz_adb_sync.c) share: the listing callback, with the
 * oracle every listing must pass.
 */
#ifndef RD_FUZZ_ADB_H
#define RD_FUZZ_ADB_H

#include "adb_internal.h"

#include <stdlib.h>
#include <string.h>

/** An adb_dirent_fn counting the entries in *(size_t *)user; traps on "." or "..", which never reach callers. */
static inline rd_status fuzz_adb_check_dirent(void *user, const rd_adb_dirent *d, rd_error *err)
{
    (void)err;
    size_t len = strlen(d->name);
    if ((len == 1 && d->name[0] == '.') || (len == 2 && memcmp(d->name, "..", 2) == 0))
        abort();
    (*(size_t *)user)++;
    return RD_OK;
}

#endif
