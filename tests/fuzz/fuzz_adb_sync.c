/*
 * fuzz_adb_sync.c: the sync reply parser. The input is the byte stream a board sends on a sync:
 * service (a memory stream, adb_bridge/src/stream.c); the first byte chooses v1 or v2 records and
 * the request, the rest are replies to STAT/STA2, LIST/LIS2 and RECV. Lengths inside (names, DATA
 * chunks, FAIL messages) are what the target exercises: each must be checked before it sizes
 * anything.
 *
 * Build needs (for tests/fuzz/tests.cmake): LIBS rd::adb_bridge, include dir adb_bridge/src
 * (adb_internal.h).
 */
#include "adb_internal.h"
#include "fuzz_adb.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT (512u * 1024u)

static rd_status sum_chunk(void *user, const uint8_t *data, size_t n, rd_error *err)
{
    uint64_t *total = user;
    if (n > RD_ADB_SYNC_DATA_MAX)
        abort(); /* the parser promised never to hand out more than one DATA chunk */
    *total += n;
    return RD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = fuzz_copy_at_least(data, size, 1, FUZZ_MAX_INPUT);
    if (!buf)
        return 0;
    uint8_t mode = buf[0];
    adb_stream *s = adb_mem_stream_create(buf + 1, size - 1);
    if (s) {
        bool v2 = mode & 1;
        rd_error err;
        rd_adb_stat st;
        size_t n = 0;
        uint64_t total = 0, got = 0;
        bool failed = false;
        uint64_t max = (mode & 4) ? ((uint64_t)mode << 8) : UINT64_MAX;
        switch ((mode >> 1) & 1) {
        case 0:
            if (adb_sync_stat(s, v2, "/userdata/dumps", &st, &err) == RD_OK)
                adb_sync_list(s, v2, "/userdata/dumps/", fuzz_adb_check_dirent, &n, &err);
            break;
        default:
            if (adb_sync_recv(s, "/userdata/dumps/x.npy", max, sum_chunk, &total, &got, &failed, &err) == RD_OK &&
                got > max)
                abort(); /* never more than announced */
            break;
        }
        s->ops->close(s);
    }
    free(buf);
    return 0;
}
