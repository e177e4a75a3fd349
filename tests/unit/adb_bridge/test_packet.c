/* test_packet.c: header encoding and validation, checksums, banner parsing, safe names, sync
 * replies. */
#include "adb_internal.h"
#include "rd_test.h"

#include <string.h>

static void test_header_roundtrip(void)
{
    adb_header h = {
        .command = A_WRTE, .arg0 = 7, .arg1 = 9, .data_length = 100, .data_check = 0, .magic = A_WRTE ^ 0xffffffffu};
    uint8_t b[ADB_HEADER_SIZE];
    adb_header_encode(&h, b);
    CU_ASSERT_EQUAL(memcmp(b, "WRTE", 4), 0);
    adb_header d;
    rd_error err;
    CU_ASSERT_EQUAL(adb_header_decode(b, 4096, &d, &err), RD_OK);
    CU_ASSERT_EQUAL(memcmp(&d, &h, sizeof h), 0);
}

static void test_header_bad(void)
{
    /* the exact CNXN header real adb 29 sends (adb-protocol.md) */
    static const uint8_t cnxn[] = {0x43, 0x4e, 0x58, 0x4e, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x10, 0x00,
                                   0x77, 0x00, 0x00, 0x00, 0x40, 0x2e, 0x00, 0x00, 0xbc, 0xb1, 0xa7, 0xb1};
    adb_header d;
    rd_error err;
    CU_ASSERT_EQUAL(adb_header_decode(cnxn, 4096, &d, &err), RD_OK);
    CU_ASSERT_EQUAL(d.arg0, 0x01000001u);
    CU_ASSERT_EQUAL(d.arg1, 1u << 20);
    CU_ASSERT_EQUAL(d.data_length, 119u);
    uint8_t b[ADB_HEADER_SIZE];
    memcpy(b, cnxn, sizeof b);
    b[20] ^= 1;
    CU_ASSERT_EQUAL(adb_header_decode(b, 4096, &d, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "magic"));
    CU_ASSERT_EQUAL(adb_header_decode(cnxn, 100, &d, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "oversized"));
    adb_header u = {.command = 0x12345678, .magic = 0x12345678 ^ 0xffffffffu};
    adb_header_encode(&u, b);
    CU_ASSERT_EQUAL(adb_header_decode(b, 4096, &d, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown command"));
}

static void test_checksum(void)
{
    static const char banner[] = "host::features=remount_shell,abb_exec,abb,apex,fixed_push_mkdir,ls_v2,stat_v2,"
                                 "fixed_push_symlink_timestamp,cmd,shell_v2";
    CU_ASSERT_EQUAL(strlen(banner), 119u);
    CU_ASSERT_EQUAL(adb_checksum((const uint8_t *)banner, 119), 0x2e40u);
    CU_ASSERT_EQUAL(adb_checksum(NULL, 0), 0u);
}

static void test_banner(void)
{
    char f[128], d[128];
    adb_banner_parse("device::ro.product.name=rk3588;ro.product.model=EVB;ro.product.device=rk;"
                     "features=shell_v2,ls_v2",
                     f, sizeof f, d, sizeof d);
    CU_ASSERT_STRING_EQUAL(f, "shell_v2,ls_v2");
    CU_ASSERT_STRING_EQUAL(d, "product:rk3588 model:EVB device:rk");
    CU_ASSERT_TRUE(adb_has_feature(f, "ls_v2"));
    CU_ASSERT_FALSE(adb_has_feature(f, "ls"));
    CU_ASSERT_FALSE(adb_has_feature(f, "stat_v2"));
    adb_banner_parse("garbage", f, sizeof f, d, sizeof d);
    CU_ASSERT_STRING_EQUAL(f, "");
}

static void test_safe_names(void)
{
    CU_ASSERT_TRUE(adb_safe_name("a.npy", 5));
    CU_ASSERT_TRUE(adb_safe_name("..a", 3));
    CU_ASSERT_FALSE(adb_safe_name("..", 2));
    CU_ASSERT_FALSE(adb_safe_name(".", 1));
    CU_ASSERT_FALSE(adb_safe_name("", 0));
    CU_ASSERT_FALSE(adb_safe_name("a/b", 3));
    CU_ASSERT_FALSE(adb_safe_name("../../x", 7));
    CU_ASSERT_FALSE(adb_safe_name("/abs", 4));
}

static void put(uint8_t **p, uint32_t v)
{
    adb_put_u32(*p, v);
    *p += 4;
}

static rd_status count_dirent(void *user, const rd_adb_dirent *d, rd_error *err)
{
    (*(int *)user)++;
    return RD_OK;
}

static void test_sync_replies(void)
{
    uint8_t buf[256], *p = buf;
    /* LIST v1: ".", "a", DONE */
    put(&p, SYNC_DENT), put(&p, 040755), put(&p, 0), put(&p, 0), put(&p, 1);
    *p++ = '.';
    put(&p, SYNC_DENT), put(&p, 0100644), put(&p, 5), put(&p, 0), put(&p, 1);
    *p++ = 'a';
    put(&p, SYNC_DONE), put(&p, 0), put(&p, 0), put(&p, 0), put(&p, 0);
    adb_stream *s = adb_mem_stream_create(buf, (size_t)(p - buf));
    int n = 0;
    rd_error err;
    CU_ASSERT_EQUAL(adb_sync_list(s, false, "/x", count_dirent, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(n, 1);
    s->ops->close(s);
    /* a name length beyond the cap */
    p = buf;
    put(&p, SYNC_DENT), put(&p, 0100644), put(&p, 5), put(&p, 0), put(&p, 0x7fffffff);
    s = adb_mem_stream_create(buf, (size_t)(p - buf));
    CU_ASSERT_EQUAL(adb_sync_list(s, false, "/x", count_dirent, &n, &err), RD_E_DEVICE);
    s->ops->close(s);
    /* RECV: DATA larger than 64 KiB */
    p = buf;
    put(&p, SYNC_DATA), put(&p, 70000);
    s = adb_mem_stream_create(buf, (size_t)(p - buf));
    uint64_t got;
    bool failed;
    CU_ASSERT_EQUAL(adb_sync_recv(s, "/f", UINT64_MAX, NULL, NULL, &got, &failed, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "DATA chunk"));
    s->ops->close(s);
    /* RECV: FAIL with message */
    p = buf;
    put(&p, SYNC_FAIL), put(&p, 11);
    memcpy(p, "open failed", 11);
    p += 11;
    s = adb_mem_stream_create(buf, (size_t)(p - buf));
    CU_ASSERT_EQUAL(adb_sync_recv(s, "/f", UINT64_MAX, NULL, NULL, &got, &failed, &err), RD_E_DEVICE);
    CU_ASSERT_TRUE(failed);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "open failed"));
    s->ops->close(s);
    /* RECV: more than announced */
    p = buf;
    put(&p, SYNC_DATA), put(&p, 4);
    memcpy(p, "abcd", 4);
    p += 4;
    put(&p, SYNC_DONE), put(&p, 0);
    s = adb_mem_stream_create(buf, (size_t)(p - buf));
    CU_ASSERT_EQUAL(adb_sync_recv(s, "/f", 3, NULL, NULL, &got, &failed, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than"));
    s->ops->close(s);
    /* truncated stream */
    s = adb_mem_stream_create(buf, 6);
    CU_ASSERT_EQUAL(adb_sync_recv(s, "/f", UINT64_MAX, NULL, NULL, &got, &failed, &err), RD_E_DEVICE);
    s->ops->close(s);
}

static void test_fake_transport_handshake(void)
{
    /* a scripted board: CNXN reply with a 4 KiB limit, then OKAY for OPEN id 1 */
    uint8_t script[512];
    size_t n = 0;
    static const char banner[] = "device::features=shell_v2,stat_v2";
    adb_header h = {.command = A_CNXN,
                    .arg0 = 0x01000000,
                    .arg1 = 4096,
                    .data_length = sizeof banner - 1,
                    .magic = A_CNXN ^ 0xffffffffu};
    h.data_check = adb_checksum((const uint8_t *)banner, sizeof banner - 1);
    adb_header_encode(&h, script);
    memcpy(script + 24, banner, sizeof banner - 1);
    n = 24 + sizeof banner - 1;
    adb_header ok = {.command = A_OKAY, .arg0 = 5, .arg1 = 1, .magic = A_OKAY ^ 0xffffffffu};
    adb_header_encode(&ok, script + n);
    n += 24;
    adb_ptransport *t = adb_fake_transport_create(script, n);
    adb_conn *c = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(adb_conn_connect(t, NULL, 1000, &c, &err), RD_OK);
    CU_ASSERT_EQUAL(c->version, 0x01000000u);
    CU_ASSERT_EQUAL(c->max_send, 4096u);
    adb_stream *s = NULL;
    CU_ASSERT_EQUAL(adb_conn_open(c, "sync:", &s, &err), RD_OK);
    /* a write larger than the limit is split; the script has no OKAY left: clean error, no hang */
    uint8_t big[10000] = {0};
    CU_ASSERT_EQUAL(s->ops->write(s, big, sizeof big, &err), RD_E_DEVICE);
    s->ops->close(s);
    adb_conn_destroy(c);
}

RD_TEST_REGISTER(register_packet)
{
    RD_SUITE("adb_packet", {"header round trip", test_header_roundtrip}, {"bad headers", test_header_bad},
             {"checksum", test_checksum}, {"banner", test_banner}, {"safe names", test_safe_names},
             {"sync replies", test_sync_replies}, {"fake transport handshake", test_fake_transport_handshake});
}
