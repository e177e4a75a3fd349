/* adb_test_util.c: see adb_test_util.h. */
#include "adb_test_util.h"
#include "adb_internal.h"
#include "rd_test.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *at_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

bool at_write_file(const char *path, size_t n, unsigned seed)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return false;
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        fputc((int)(x & 0xff), f);
    }
    return fclose(f) == 0;
}

static void mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    }
    mkdir(buf, 0755);
}

bool at_make_dump_tree(const char *root)
{
    static const struct {
        const char *name;
        size_t size;
    } files[] = {
        {"000_InputOperator_input_shape_1_3_224_224_uint8.npy", 150656},
        {"001_ConvRelu_conv1_shape_1_64_112_112_float.npy", 3211392},
        {"002_empty.npy", 0},
        {"003_one.npy", 1},
        {"004_512.npy", 512},
        {"005_4096.npy", 4096},
        {"006_65536.npy", 65536},
        {"007_65537.npy", 65537},
        {"008_1MiB_plus.npy", 1048576 + 3},
        {"name with spaces.txt", 77},
        {"sub/deeper/010_OutputOperator_out_shape_1_1000_float.npy", 4128},
        {"sub/011_x.txt", 100},
    };
    char *dumps = at_join(root, "userdata/dumps");
    mkdirs(dumps);
    char *d2 = at_join(dumps, "sub/deeper");
    mkdirs(d2);
    free(d2);
    bool ok = true;
    for (size_t i = 0; i < sizeof files / sizeof files[0] && ok; i++) {
        char *p = at_join(dumps, files[i].name);
        ok = at_write_file(p, files[i].size, (unsigned)i + 1);
        free(p);
    }
    free(dumps);
    return ok;
}

static bool files_equal(const char *a, const char *b)
{
    size_t la = 0, lb = 0;
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool eq = fa && fb;
    while (eq) {
        char ba[8192], bb[8192];
        la = fread(ba, 1, sizeof ba, fa);
        lb = fread(bb, 1, sizeof bb, fb);
        if (la != lb || memcmp(ba, bb, la) != 0)
            eq = false;
        if (la == 0)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return eq;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

bool at_trees_equal(const char *a, const char *b)
{
    if (count_entries(a) != count_entries(b) || count_entries(a) < 0)
        return false;
    DIR *d = opendir(a);
    if (!d)
        return false;
    bool eq = true;
    struct dirent *e;
    while (eq && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *pa = at_join(a, e->d_name), *pb = at_join(b, e->d_name);
        struct stat sa, sb;
        if (lstat(pa, &sa) != 0 || lstat(pb, &sb) != 0)
            eq = false;
        else if (S_ISDIR(sa.st_mode))
            eq = S_ISDIR(sb.st_mode) && at_trees_equal(pa, pb);
        else
            eq = S_ISREG(sb.st_mode) && files_equal(pa, pb);
        if (!eq)
            fprintf(stderr, "trees differ at %s\n", pb);
        free(pa);
        free(pb);
    }
    closedir(d);
    return eq;
}

int at_count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = at_join(dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0)
            n += S_ISDIR(st.st_mode) ? at_count_files(p) : 1;
        free(p);
    }
    closedir(d);
    return n;
}

void at_rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char *p = at_join(path, e->d_name);
            at_rm_rf(p);
            free(p);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* ---- logs and a board ---- */

void at_log_init(at_log *l)
{
    pthread_mutex_init(&l->lock, NULL);
    l->text[0] = '\0';
}

void at_log_cb(void *user, const char *msg)
{
    at_log *l = user;
    pthread_mutex_lock(&l->lock);
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s\n", msg);
    pthread_mutex_unlock(&l->lock);
}

bool at_log_has(at_log *l, const char *part)
{
    pthread_mutex_lock(&l->lock);
    bool has = strstr(l->text, part) != NULL;
    pthread_mutex_unlock(&l->lock);
    return has;
}

bool at_board_start(at_board *fx, const char *tag, rd_board_options *opt, bool tree)
{
    memset(fx, 0, sizeof *fx);
    at_log_init(&fx->log);
    fx->dir = rd_test_tmpdir(tag);
    if (!fx->dir)
        return false;
    fx->root = at_join(fx->dir, "root");
    fx->home = at_join(fx->dir, "home");
    fx->dumps = at_join(fx->root, "userdata/dumps");
    mkdir(fx->root, 0755);
    mkdir(fx->home, 0755);
    if (tree && !at_make_dump_tree(fx->root))
        return false;
    opt->root = fx->root;
    if (!opt->home)
        opt->home = fx->home;
    opt->log = at_log_cb;
    opt->log_user = &fx->log;
    rd_error err;
    if (rd_board_start(opt, &fx->board, &err) != RD_OK) {
        fprintf(stderr, "board: %s\n", err.msg);
        return false;
    }
    snprintf(fx->addr, sizeof fx->addr, "%s", rd_board_address(fx->board));
    return true;
}

void at_board_stop(at_board *fx)
{
    rd_board_stop(fx->board);
    fx->board = NULL;
    if (fx->dir)
        at_rm_rf(fx->dir);
    free(fx->dir);
    free(fx->root);
    free(fx->home);
    free(fx->dumps);
    pthread_mutex_destroy(&fx->log.lock);
}

rd_status at_board_open(at_board *fx, int timeout_ms, at_log *log, rd_adb **dev, rd_error *err)
{
    rd_adb_options o = {.transport = RD_ADB_TCP,
                        .connect = fx->addr,
                        .timeout_ms = timeout_ms,
                        .home = fx->home,
                        .log = log ? at_log_cb : NULL,
                        .log_user = log};
    return rd_adb_open(&o, dev, err);
}

/* ---- a scripted adb server ---- */

static bool read_request(int fd, char *out, size_t cap)
{
    char h[5] = {0};
    rd_error err;
    if (adb_fd_read_exact(fd, h, 4, 2000, "test", &err) != RD_OK)
        return false;
    unsigned n = 0;
    for (int i = 0; i < 4; i++)
        n = n * 16 + (unsigned)(h[i] <= '9' ? h[i] - '0' : h[i] - 'a' + 10);
    if (n >= cap || adb_fd_read_exact(fd, out, n, 2000, "test", &err) != RD_OK)
        return false;
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
    at_server *s = arg;
    for (int i = 0; i < s->n_conns; i++) {
        int fd = accept(s->listen_fd, NULL, NULL);
        if (fd < 0)
            break;
        char req[256];
        while (read_request(fd, req, sizeof req)) {
            if (strcmp(req, "host:devices") == 0)
                reply(fd, "OKAY0015board-1\tdevice\nb2\tof\n");
            else if (strcmp(req, "host:devices-l") == 0)
                reply(fd, "OKAY001eboard-1  unauthorized usb:1-2\n");
            else if (strcmp(req, "host-serial:board-1:features") == 0)
                reply(fd, "OKAY0008shell_v2");
            else if (strcmp(req, "host-serial:board-1:get-state") == 0)
                reply(fd, "OKAY0006device");
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

bool at_server_start(at_server *s, int n_conns)
{
    s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s->listen_fd, 8) != 0 ||
        getsockname(s->listen_fd, (struct sockaddr *)&sa, &sl) != 0)
        return false;
    s->port = ntohs(sa.sin_port);
    s->n_conns = n_conns;
    return pthread_create(&s->th, NULL, serve, s) == 0;
}

void at_server_stop(at_server *s)
{
    shutdown(s->listen_fd, SHUT_RDWR);
    pthread_join(s->th, NULL);
    close(s->listen_fd);
}
