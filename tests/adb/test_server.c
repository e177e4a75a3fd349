/*
 * test_server.c: the adb server's smart-socket client against a scripted server in a thread: host
 * queries (OKAY + hex4 + text), FAIL replies turned into statuses, a bad length, and the transport
 * switch followed by a service. Debian's real server is exercised by e2e_real_adb.sh; this runs
 * without it.
 */
#include "adb_internal.h"
#include "rd_test.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct script_server {
    int listen_fd;
    int port;
    int n_conns; /* connections to serve, then the thread ends */
    pthread_t th;
} script_server;

static bool read_request(int fd, char *out, size_t cap)
{
    char h[5] = {0};
    rd_error err;
    if (adb_fd_read_exact(fd, h, 4, 2000, "test", &err) != RD_OK) return false;
    unsigned n = 0;
    for (int i = 0; i < 4; i++)
        n = n * 16 + (unsigned)(h[i] <= '9' ? h[i] - '0' : h[i] - 'a' + 10);
    if (n >= cap || adb_fd_read_exact(fd, out, n, 2000, "test", &err) != RD_OK) return false;
    out[n] = '\0';
    return true;
}

static void reply(int fd, const char *text)
{
    rd_error err;
    adb_fd_write_all(fd, text, strlen(text), 2000, "test", &err);
}

static void *serve(void *arg)
{
    script_server *s = arg;
    for (int i = 0; i < s->n_conns; i++) {
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0) break;
        char req[256];
        while (read_request(fd, req, sizeof req)) {
            if (strcmp(req, "host:devices") == 0)
                reply(fd, "OKAY0015board-1\tdevice\nb2\tof\n");
            else if (strcmp(req, "host:devices-l") == 0)
                reply(fd, "OKAY001eboard-1  unauthorized usb:1-2\n");
            else if (strcmp(req, "host-serial:board-1:features") == 0)
                reply(fd, "OKAY0008shell_v2");
            else if (strcmp(req, "host:bad") == 0)
                reply(fd, "OKAYzz12");
            else if (strcmp(req, "host:transport:board-1") == 0)
                reply(fd, "OKAY");
            else if (strcmp(req, "echo:") == 0) {
                reply(fd, "OKAYhello");
                break;
            } else if (strcmp(req, "host:transport:nope") == 0)
                reply(fd, "FAIL0017device 'nope' not found");
            else
                reply(fd, "FAIL0014unknown host service");
            if (strncmp(req, "host:transport:", 15) != 0)
                break; /* one request per connection, except a transport switch */
        }
        close(fd);
    }
    return NULL;
}

static bool server_start(script_server *s, int n_conns)
{
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(s->listen_fd, 8) != 0 || getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) != 0)
        return false;
    s->port = ntohs(sa.sin_port);
    s->n_conns = n_conns;
    return pthread_create(&s->th, NULL, serve, s) == 0;
}

static void server_stop(script_server *s)
{
    shutdown(s->listen_fd, SHUT_RDWR);
    pthread_join(s->th, NULL);
    close(s->listen_fd);
}

static void test_queries(void)
{
    script_server s;
    CU_ASSERT_FATAL(server_start(&s, 6));
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
    server_stop(&s);
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
    RD_SUITE("adb_server", {"smart-socket queries", test_queries},
             {"server port", test_port_choice});
}
