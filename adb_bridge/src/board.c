/*
 * board.c: the fake board's life cycle: options and faults, the listening socket on 127.0.0.1, the
 * accept thread, connection threads, and the mapping of board paths under the served folder.
 */
#include "board_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

const char *rd_board_fault_help(void)
{
    return "  drop:N          close the connection after N bytes sent\n"
           "  corrupt[:N]     corrupt the header of the Nth data packet (default 2)\n"
           "  oversize[:N]    make the Nth data packet larger than announced (default 2)\n"
           "  stall           stop answering at the first file read (RECV)\n"
           "  recv-fail[:N]   answer FAIL to the first N file reads (default 1)\n"
           "  tiny            announce a maximum payload of 256 bytes\n"
           "  max-payload:N   announce a maximum payload of N bytes\n"
           "  unauthorized    require a key and never accept one\n"
           "  v1              speak protocol version 0x01000000 (checksums on every packet)\n"
           "  evil-name:NAME  add an entry NAME to every folder listing (e.g. ../../x, a/b, /abs)\n"
           "  grow            send 100 bytes more than each file holds\n";
}

static bool parse_num(const char *s, size_t len, long min, long max, long *out)
{
    if (len == 0 || len > 18) return false;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (s[i] - '0');
    }
    if (v < min || v > max) return false;
    *out = v;
    return true;
}

static rd_status parse_faults(const char *text, board_faults *f, rd_error *err)
{
    memset(f, 0, sizeof *f);
    f->drop_after = -1;
    const char *p = text ? text : "";
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *colon = memchr(p, ':', len);
        size_t nl = colon ? (size_t)(colon - p) : len;
        const char *arg = colon ? colon + 1 : NULL;
        size_t al = colon ? len - nl - 1 : 0;
        long v = 0;
#define IS(name) (nl == strlen(name) && strncmp(p, name, nl) == 0)
        if (IS("drop") && arg && parse_num(arg, al, 0, 1L << 40, &v))
            f->drop_after = v;
        else if (IS("corrupt") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->corrupt_wrte = arg ? (int)v : 2;
        else if (IS("oversize") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->oversize_wrte = arg ? (int)v : 2;
        else if (IS("stall") && !arg)
            f->stall = true;
        else if (IS("recv-fail") && (!arg || parse_num(arg, al, 1, 1000000, &v)))
            f->recv_fail = arg ? (int)v : 1;
        else if (IS("tiny") && !arg)
            f->max_payload = 256;
        else if (IS("max-payload") && arg && parse_num(arg, al, 256, RD_ADB_MAX_PAYLOAD, &v))
            f->max_payload = (uint32_t)v;
        else if (IS("unauthorized") && !arg)
            f->unauthorized = true;
        else if (IS("v1") && !arg)
            f->version = ADB_VERSION_MIN;
        else if (IS("grow") && !arg)
            f->grow = true;
        else if (IS("evil-name") && arg && al > 0 && al < sizeof f->evil[0] &&
                 f->n_evil < BOARD_EVIL_MAX) {
            memcpy(f->evil[f->n_evil], arg, al);
            f->evil[f->n_evil++][al] = '\0';
        } else
            return rd_errorf(err, RD_E_USAGE,
                             "unknown or malformed fault '%.*s'; known faults:\n%s", (int)len, p,
                             rd_board_fault_help());
#undef IS
        p += len;
        if (*p == ',') p++;
    }
    return RD_OK;
}

rd_status rd_board_faults_check(const char *faults, rd_error *err)
{
    board_faults f;
    return parse_faults(faults, &f, err);
}

void board_log(const rd_board *b, const char *fmt, ...)
{
    if (!b->log) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->log(b->log_user, msg);
}

bool board_map_path(const char *root, const char *path, char *out, size_t cap)
{
    /* refuse any ".." component */
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        size_t l = strcspn(p, "/");
        if (l == 2 && p[0] == '.' && p[1] == '.') return false;
        p += l;
    }
    int w = snprintf(out, cap, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
    return w > 0 && (size_t)w < cap;
}

char *board_map_command(const char *root, const char *cmd)
{
    size_t rl = strlen(root), cl = strlen(cmd);
    size_t n_slash = 0;
    for (size_t i = 0; i < cl; i++)
        n_slash += cmd[i] == '/';
    char *out = malloc(cl + n_slash * rl + 1);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < cl; i++) {
        bool word_start = i == 0 || strchr(" \t;&|()'\"=<>`\n", cmd[i - 1]);
        if (cmd[i] == '/' && word_start) {
            size_t l = strcspn(cmd + i + 1, "/ \t;&|()'\"<>`\n");
            char first[256];
            bool map = false;
            if (l > 0 && l < sizeof first) {
                memcpy(first, cmd + i + 1, l);
                first[l] = '\0';
                char probe[4400];
                struct stat st;
                snprintf(probe, sizeof probe, "%s/%s", root, first);
                map = strcmp(first, "userdata") == 0 || strcmp(first, "data") == 0 ||
                      strcmp(first, "tmp") == 0 || stat(probe, &st) == 0;
            }
            if (map) {
                memcpy(out + o, root, rl);
                o += rl;
            }
        }
        out[o++] = cmd[i];
    }
    out[o] = '\0';
    return out;
}

static void reap_threads(rd_board *b, bool all)
{
    pthread_mutex_lock(&b->lock);
    for (size_t i = 0; i < b->n_threads; i++) {
        board_thread *t = &b->threads[i];
        if (t->joined || (!all && !t->done)) continue;
        pthread_mutex_unlock(&b->lock);
        pthread_join(t->th, NULL);
        pthread_mutex_lock(&b->lock);
        t->joined = true;
    }
    /* compact */
    size_t k = 0;
    for (size_t i = 0; i < b->n_threads; i++)
        if (!b->threads[i].joined) b->threads[k++] = b->threads[i];
    b->n_threads = k;
    pthread_mutex_unlock(&b->lock);
}

void board_thread_done(rd_board *b, pthread_t self)
{
    pthread_mutex_lock(&b->lock);
    for (size_t i = 0; i < b->n_threads; i++)
        if (pthread_equal(b->threads[i].th, self)) b->threads[i].done = true;
    pthread_mutex_unlock(&b->lock);
}

static void *accept_main(void *arg)
{
    rd_board *b = arg;
    for (;;) {
        struct pollfd pf[2] = {{.fd = b->listen_fd, .events = POLLIN},
                               {.fd = b->stop_pipe[0], .events = POLLIN}};
        int pr = poll(pf, 2, 1000);
        if (pr < 0 && errno != EINTR) break;
        if (pf[1].revents) break;
        reap_threads(b, false);
        if (pr <= 0 || !(pf[0].revents & POLLIN)) continue;
        int fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        bconn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->b = b;
        c->fd = fd;
        pthread_mutex_lock(&b->lock);
        if (b->n_threads == b->cap_threads) {
            size_t cap = b->cap_threads ? b->cap_threads * 2 : 8;
            board_thread *nt = realloc(b->threads, cap * sizeof *nt);
            if (!nt) {
                pthread_mutex_unlock(&b->lock);
                close(fd);
                free(c);
                continue;
            }
            b->threads = nt;
            b->cap_threads = cap;
        }
        board_thread *t = &b->threads[b->n_threads];
        memset(t, 0, sizeof *t);
        if (pthread_create(&t->th, NULL, board_conn_main, c) != 0) {
            pthread_mutex_unlock(&b->lock);
            close(fd);
            free(c);
            continue;
        }
        b->n_threads++;
        pthread_mutex_unlock(&b->lock);
    }
    return NULL;
}

static void board_free(rd_board *b)
{
    if (!b) return;
    if (b->listen_fd >= 0) close(b->listen_fd);
    if (b->stop_pipe[0] >= 0) close(b->stop_pipe[0]);
    if (b->stop_pipe[1] >= 0) close(b->stop_pipe[1]);
    for (size_t i = 0; i < b->n_trusted; i++)
        free(b->trusted[i]);
    free(b->trusted);
    free(b->threads);
    free(b->root);
    free(b->features);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

rd_status rd_board_start(const rd_board_options *opt, rd_board **out, rd_error *err)
{
    if (!opt || !opt->root || !out)
        return rd_errorf(err, RD_E_INVAL, "board-emulate needs a root folder");
    struct stat st;
    if (stat(opt->root, &st) != 0 || !S_ISDIR(st.st_mode))
        return rd_errorf(err, RD_E_NOTFOUND, "board root '%s' is not a folder", opt->root);
    rd_board *b = calloc(1, sizeof *b);
    if (!b) return rd_errorf(err, RD_E_NOMEM, "out of memory");
    b->listen_fd = -1;
    b->stop_pipe[0] = b->stop_pipe[1] = -1;
    pthread_mutex_init(&b->lock, NULL);
    rd_status rs = parse_faults(opt->faults, &b->faults, err);
    if (rs != RD_OK) {
        board_free(b);
        return rs;
    }
    b->root = realpath(opt->root, NULL);
    b->features = strdup(opt->features ? opt->features : ADB_HOST_FEATURES);
    if (!b->root || !b->features) {
        board_free(b);
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    }
    b->auth = opt->auth || b->faults.unauthorized;
    b->accept_delay_ms = opt->accept_delay_ms;
    b->version = b->faults.version ? b->faults.version : opt->version ? opt->version : ADB_VERSION;
    b->max_payload = b->faults.max_payload ? b->faults.max_payload
                     : opt->max_payload    ? opt->max_payload
                                           : RD_ADB_MAX_PAYLOAD;
    if (b->max_payload < 256 || b->max_payload > RD_ADB_MAX_PAYLOAD) {
        board_free(b);
        return rd_errorf(err, RD_E_INVAL, "max payload must be 256..%u bytes", RD_ADB_MAX_PAYLOAD);
    }
    b->log = opt->log;
    b->log_user = opt->log_user;
    if (pipe2(b->stop_pipe, O_CLOEXEC) != 0) {
        board_free(b);
        return rd_errorf(err, RD_E_IO, "pipe: %s", strerror(errno));
    }
    b->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(b->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)opt->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    if (b->listen_fd < 0 || bind(b->listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(b->listen_fd, 16) != 0 ||
        getsockname(b->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        int e = errno;
        board_free(b);
        return rd_errorf(err, RD_E_IO, "cannot listen on 127.0.0.1:%d: %s", opt->port, strerror(e));
    }
    b->port = ntohs(sa.sin_port);
    if (pthread_create(&b->accept_th, NULL, accept_main, b) != 0) {
        board_free(b);
        return rd_errorf(err, RD_E_NOMEM, "cannot start the board thread");
    }
    board_log(b, "board on 127.0.0.1:%d serving %s (auth %s, version 0x%08x, max payload %u)",
              b->port, b->root, b->auth ? "on" : "off", b->version, b->max_payload);
    *out = b;
    return RD_OK;
}

int rd_board_port(const rd_board *b)
{
    return b ? b->port : 0;
}

void rd_board_stop(rd_board *b)
{
    if (!b) return;
    char x = 1;
    ssize_t w = write(b->stop_pipe[1], &x, 1);
    (void)w;
    pthread_join(b->accept_th, NULL);
    reap_threads(b, true);
    board_free(b);
}
