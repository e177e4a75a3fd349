/*
 * test_server.c: the adb server's smart-socket client against a scripted server in a thread: host
 * queries (OKAY + hex4 + text), FAIL replies turned into statuses, a bad length, and the transport
 * switch followed by a service. Debian's real server is exercised by e2e_real_adb.sh; this runs
 * without it.
 */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "rd_test.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void test_queries(void)
{
    at_server s;
    CU_ASSERT_FATAL(at_server_start(&s, 6));
    rd_error err;
    char *text = NULL;
    CU_ASSERT_EQUAL(adb_server_query(s.port, "host:devices-l", 2000, &text, &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(text, "board-1  unauthorized usb:1-2\n");
    free(text);
    CU_ASSERT_EQUAL(adb_server_query(s.port, "host:nonsense", 2000, &text, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "unknown host service"));
    CU_ASSERT_EQUAL(adb_server_query(s.port, "host:bad", 2000, &text, &err), RD_E_DEVICE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad length"));
    adb_stream *st = NULL;
    CU_ASSERT_EQUAL(adb_server_open(s.port, "nope", "sync:", 2000, &st, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not found"));
    CU_ASSERT_EQUAL_FATAL(adb_server_open(s.port, "board-1", "echo:", 2000, &st, &err), RD_OK);
    char buf[8] = {0};
    CU_ASSERT_EQUAL(adb_stream_read_exact(st, buf, 5, "echo", &err), RD_OK);
    CU_ASSERT_STRING_EQUAL(buf, "hello");
    st->ops->close(st);
    /* the device list through rd_adb_devices (transport server only, so no USB probing) */
    rd_adb_options o = {.transport = RD_ADB_SERVER, .server_port = s.port, .timeout_ms = 2000};
    rd_adb_device_info *list = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(rd_adb_devices(&o, &list, &n, &err), RD_OK);
    CU_ASSERT_EQUAL_FATAL(n, 1u);
    CU_ASSERT_STRING_EQUAL(list[0].serial, "board-1");
    CU_ASSERT_STRING_EQUAL(list[0].state, "unauthorized");
    CU_ASSERT_STRING_EQUAL(list[0].description, "usb:1-2");
    free(list);
    at_server_stop(&s);
    /* nobody listening: RD_E_IO naming the port, quickly */
    CU_ASSERT_EQUAL(adb_server_query(s.port, "host:devices", 1000, &text, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no adb server"));
}

static void test_port_choice(void)
{
    rd_adb_options o = {0};
    setenv("ANDROID_ADB_SERVER_PORT", "15099", 1);
    CU_ASSERT_EQUAL(adb_server_port(&o), 15099);
    setenv("ANDROID_ADB_SERVER_PORT", "junk", 1);
    CU_ASSERT_EQUAL(adb_server_port(&o), 5037);
    o.server_port = 6000;
    CU_ASSERT_EQUAL(adb_server_port(&o), 6000);
    unsetenv("ANDROID_ADB_SERVER_PORT");
}

RD_TEST_REGISTER(register_server)
{
    RD_SUITE("adb_server", {"smart-socket queries", test_queries}, {"server port", test_port_choice});
}
