/*
 * fuzz_adb_packet.c: the ADB packet layer and connection as a board could drive them. The input is
 * everything the "board" sends, played through the fake packet transport
 * (adb_bridge/src/transport_fake.c): the first 24 bytes are also decoded on their own with a
 * write-then-read oracle (encode(decode(x)) == x), then a whole session runs: CNXN/AUTH handshake,
 * OPEN sync:, STAT, LIST, RECV into memory, shell. The input's last byte picks the receive limit,
 * so small limits are reached without huge inputs.
 *
 * Build needs (for tests/fuzz/tests.cmake): LIBS rd::adb_bridge, include dir adb_bridge/src
 * (adb_internal.h).
 */
#include "adb_internal.h"
#include "fuzz_adb.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT (256u * 1024u)

static rd_status discard_chunk(void *user, const uint8_t *data, size_t n, rd_error *err)
{
    size_t *total = user;
    *total += n;
    return *total > (8u << 20) ? rd_errorf(err, RD_E_LIMIT, "enough") : RD_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = fuzz_copy_at_least(data, size, 1, FUZZ_MAX_INPUT);
    if (!buf)
        return 0;

    if (size >= ADB_HEADER_SIZE) {
        adb_header h;
        rd_error err;
        uint32_t limit = 64u << (buf[size - 1] % 15); /* 64 B .. 1 MiB */
        if (adb_header_decode(buf, limit, &h, &err) == RD_OK) {
            uint8_t again[ADB_HEADER_SIZE];
            adb_header_encode(&h, again);
            if (memcmp(again, buf, ADB_HEADER_SIZE) != 0)
                abort(); /* oracle: a header we accept re-encodes to the same bytes */
        }
    }

    adb_ptransport *t = adb_fake_transport_create(buf, size);
    if (t) {
        /* a home that cannot exist: AUTH must fail cleanly without touching a real key */
        rd_adb_options opt = {.home = "/nonexistent-rknn-diag-fuzz-home"};
        adb_conn *c = NULL;
        rd_error err;
        if (adb_conn_connect(t, &opt, 1000, &c, &err) == RD_OK) {
            rd_adb dev = {.kind = RD_ADB_TCP, .conn = c, .timeout_ms = 1000};
            char desc[256];
            adb_banner_parse(c->banner, dev.features, sizeof dev.features, desc, sizeof desc);
            adb_stream *s = NULL;
            if (adb_conn_open(c, "sync:", &s, &err) == RD_OK) {
                rd_adb_stat st;
                size_t n = 0, total = 0;
                uint64_t got = 0;
                bool failed = false;
                bool v2 = adb_has_feature(dev.features, "stat_v2");
                if (adb_sync_stat(s, v2, "/userdata/dumps", &st, &err) == RD_OK &&
                    adb_sync_list(s, v2, "/userdata/dumps/", fuzz_adb_check_dirent, &n, &err) == RD_OK)
                    adb_sync_recv(s, "/userdata/dumps/a.npy", UINT64_MAX, discard_chunk, &total, &got, &failed, &err);
                s->ops->close(s);
            }
            char *text = NULL;
            int code = 0;
            if (rd_adb_shell_capture(&dev, "ls", &text, NULL, &code, &err) == RD_OK)
                free(text);
            adb_conn_destroy(c);
        }
    }
    free(buf);
    return 0;
}
