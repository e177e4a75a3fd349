/*
 * test_board_security.c: the fake board is safe by default (issue 16, defect 1): only the keys it
 * is given get in (by default this user's own), it listens on loopback unless told, its sync
 * service never leaves the served folder through links, and shell commands run never as root,
 * without new privileges, unable to write outside the folder (as far as this system allows, which
 * the board states). Also the mapping of board paths in commands (issue 17: the demo from any
 * folder), checked through /bin/sh itself.
 */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "board_internal.h"
#include "rd_test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A second user's key folder (its adbkey is created on first use). */
static char *stranger_home(const at_board *fx, const char *name)
{
    char *h = at_join(fx->dir, name);
    mkdir(h, 0755);
    return h;
}

static rd_status open_as(at_board *fx, const char *home, int timeout_ms, rd_adb **dev, rd_error *err)
{
    rd_adb_options o = {.transport = RD_ADB_TCP, .connect = fx->addr, .timeout_ms = timeout_ms, .home = home};
    return rd_adb_open(&o, dev, err);
}

/* By default the board accepts this user's own key, and refuses a stranger's within the timeout. */
static void test_default_keys(void)
{
    at_board fx;
    rd_board_options bo = {0};
    CU_ASSERT_FATAL(at_board_start(&fx, "sec-keys", &bo, true));
    CU_ASSERT_TRUE(at_log_has(&fx.log, "accepting 1 key"));
    rd_adb *dev = NULL;
    rd_error err;
    at_log log;
    at_log_init(&log);
    CU_ASSERT_EQUAL(at_board_open(&fx, 3000, &log, &dev, &err), RD_OK);
    CU_ASSERT_FALSE(at_log_has(&log, "accept it")); /* signed, no prompt */
    rd_adb_close(dev);
    char *other = stranger_home(&fx, "stranger");
    char *pub = NULL; /* the stranger's key made beforehand: only the wait is timed */
    CU_ASSERT_EQUAL(adb_user_public_key(other, &pub, &err), RD_OK);
    free(pub);
    int64_t t0 = adb_now_ms();
    CU_ASSERT_EQUAL(open_as(&fx, other, 1000, &dev, &err), RD_E_AUTH);
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 10000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "accept it on the board"));
    CU_ASSERT_TRUE(at_log_has(&fx.log, "refused"));
    free(other);
    at_board_stop(&fx);
}

/* --adb-keys: those keys and no others; lines that are not keys are skipped with a word. */
static void test_keys_file(void)
{
    at_board fx;
    rd_board_options none = {.no_auth = true};
    CU_ASSERT_FATAL(at_board_start(&fx, "sec-keysfile", &none, false));
    rd_board_stop(fx.board);
    fx.board = NULL;
    char *other = stranger_home(&fx, "stranger");
    char *pub = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(adb_user_public_key(other, &pub, &err), RD_OK);
    char *keys = at_join(fx.dir, "adb_keys");
    FILE *f = fopen(keys, "w");
    fprintf(f, "# the board's keys\n\nnot a key at all\n%s\n", pub);
    fclose(f);
    rd_board_options bo = {.root = fx.root, .adb_keys = keys, .log = at_log_cb, .log_user = &fx.log};
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &fx.board, &err), RD_OK);
    snprintf(fx.addr, sizeof fx.addr, "%s", rd_board_address(fx.board));
    CU_ASSERT_TRUE(at_log_has(&fx.log, "line 3 is not an ADB public key; skipped"));
    rd_adb *dev = NULL;
    CU_ASSERT_EQUAL(open_as(&fx, other, 3000, &dev, &err), RD_OK);
    rd_adb_close(dev);
    dev = NULL;
    CU_ASSERT_EQUAL(at_board_open(&fx, 1000, NULL, &dev, &err), RD_E_AUTH); /* not in the file */
    rd_board_stop(fx.board);
    fx.board = NULL;
    /* a file without a key, a missing file and a FIFO: refused at start, at once */
    f = fopen(keys, "w");
    fputs("nothing here\n", f);
    fclose(f);
    CU_ASSERT_EQUAL(rd_board_start(&bo, &fx.board, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "holds no ADB public key"));
    unlink(keys);
    CU_ASSERT_EQUAL(rd_board_start(&bo, &fx.board, &err), RD_E_NOTFOUND);
    CU_ASSERT_EQUAL(mkfifo(keys, 0600), 0);
    CU_ASSERT_EQUAL(rd_board_start(&bo, &fx.board, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a regular file"));
    free(pub), free(keys), free(other);
    at_board_stop(&fx);
}

/* Loopback by default; --bind picks the address, and nothing else answers. */
static void test_bind(void)
{
    at_board fx;
    rd_board_options bo = {.no_auth = true};
    CU_ASSERT_FATAL(at_board_start(&fx, "sec-bind", &bo, false));
    CU_ASSERT_EQUAL(strncmp(fx.addr, "127.0.0.1:", 10), 0);
    rd_board_stop(fx.board);
    fx.board = NULL;
    bo.bind = "127.0.0.2";
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(rd_board_start(&bo, &fx.board, &err), RD_OK);
    int port = rd_board_port(fx.board);
    char want[64], other[64];
    snprintf(want, sizeof want, "127.0.0.2:%d", port);
    snprintf(other, sizeof other, "127.0.0.1:%d", port);
    CU_ASSERT_STRING_EQUAL(rd_board_address(fx.board), want);
    snprintf(fx.addr, sizeof fx.addr, "%s", other);
    rd_adb *dev = NULL;
    CU_ASSERT_EQUAL(at_board_open(&fx, 1000, NULL, &dev, &err), RD_E_IO); /* refused */
    snprintf(fx.addr, sizeof fx.addr, "%s", want);
    CU_ASSERT_EQUAL(at_board_open(&fx, 3000, NULL, &dev, &err), RD_OK);
    rd_adb_close(dev);
    rd_board_stop(fx.board);
    fx.board = NULL;
    bo.bind = "localhost:80";
    CU_ASSERT_EQUAL(rd_board_start(&bo, &fx.board, &err), RD_E_INVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not an IPv4 or IPv6 address"));
    at_board_stop(&fx);
}

static char *shell(rd_adb *dev, const char *cmd, int *code)
{
    char *text = NULL;
    rd_error err;
    *code = -1;
    if (rd_adb_shell_capture(dev, cmd, &text, NULL, code, &err) != RD_OK) {
        fprintf(stderr, "shell %s: %s\n", cmd, err.msg);
        return NULL;
    }
    return text;
}

/* Commands: never root, no new privileges, the served folder writable, a host file not. */
static void test_shell_confined(void)
{
    at_board fx;
    rd_board_options bo = {0};
    CU_ASSERT_FATAL(at_board_start(&fx, "sec-shell", &bo, true));
    /* a host file outside the folder, as the user who started the board owns it */
    char *outside = at_join(fx.dir, "outside.txt");
    FILE *f = fopen(outside, "w");
    fputs("host\n", f);
    fclose(f);
    rd_adb *dev = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(at_board_open(&fx, 5000, NULL, &dev, &err), RD_OK);
    int code = 0;
    char *uid = shell(dev, "id -u", &code);
    CU_ASSERT_PTR_NOT_NULL_FATAL(uid);
    if (geteuid() == 0)
        CU_ASSERT_NOT_EQUAL(strtol(uid, NULL, 10), 0);
    char *nnp = shell(dev, "grep NoNewPrivs /proc/self/status", &code);
    CU_ASSERT_TRUE(nnp && strstr(nnp, "1"));
    char *in = shell(dev, "echo made > /userdata/dumps/new.txt && cat /userdata/dumps/new.txt", &code);
    CU_ASSERT_EQUAL(code, 0);
    CU_ASSERT_TRUE(in && strcmp(in, "made\n") == 0);
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "echo changed >> '%s'", outside);
    free(shell(dev, cmd, &code));
    bool confined = geteuid() == 0 || at_log_has(&fx.log, "read-only for them");
    if (confined) {
        CU_ASSERT_NOT_EQUAL(code, 0);
        char *text = rd_test_read_file(outside, NULL);
        CU_ASSERT_TRUE(text && strcmp(text, "host\n") == 0);
        free(text);
    } else {
        fprintf(stderr, "note: not root and no mount namespace here: %s\n", fx.log.text);
    }
    /* what the board says matches: the log describes the confinement */
    CU_ASSERT_TRUE(at_log_has(&fx.log, "shell commands run as uid"));
    CU_ASSERT_TRUE(at_log_has(&fx.log, "without new privileges"));
    rd_adb_close(dev);
    free(uid), free(nnp), free(in), free(outside);
    at_board_stop(&fx);
}

/* The sync service resolves links inside the folder: /etc there is the folder's, not the host's. */
static void test_sync_confined(void)
{
    at_board fx;
    rd_board_options bo = {.no_auth = true};
    CU_ASSERT_FATAL(at_board_start(&fx, "sec-sync", &bo, true));
    char *escape = at_join(fx.root, "userdata/escape"), *up = at_join(fx.root, "userdata/up"),
         *inside = at_join(fx.root, "userdata/link");
    CU_ASSERT_EQUAL(symlink("/etc", escape), 0);
    CU_ASSERT_EQUAL(symlink("../../../../../../..", up), 0);
    CU_ASSERT_EQUAL(symlink("dumps", inside), 0);
    rd_adb *dev = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(at_board_open(&fx, 5000, NULL, &dev, &err), RD_OK);
    rd_adb_stat sb;
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/userdata/escape/passwd", &sb, &err), RD_OK);
    CU_ASSERT_FALSE(sb.exists);
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/userdata/up/etc/passwd", &sb, &err), RD_OK);
    CU_ASSERT_FALSE(sb.exists);
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/../../../etc/passwd", &sb, &err), RD_OK);
    CU_ASSERT_FALSE(sb.exists);
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/userdata/link/004_512.npy", &sb, &err), RD_OK);
    CU_ASSERT_TRUE(sb.exists); /* a link inside the folder works as on a board */
    CU_ASSERT_EQUAL(sb.size, 512u);
    char *out = at_join(fx.dir, "passwd");
    CU_ASSERT_NOT_EQUAL(rd_adb_pull(dev, "/userdata/escape/passwd", out, NULL, NULL, &err), RD_OK);
    CU_ASSERT_NOT_EQUAL(access(out, F_OK), 0);
    /* a push through the link lands in the folder's /etc, never the host's */
    char name[64], host[128];
    snprintf(name, sizeof name, "/userdata/escape/rknn-diag-test-%d", (int)getpid());
    snprintf(host, sizeof host, "/etc/rknn-diag-test-%d", (int)getpid());
    char *src = at_join(fx.dumps, "004_512.npy");
    rd_adb_push(dev, src, name, NULL, NULL, &err);
    CU_ASSERT_NOT_EQUAL(access(host, F_OK), 0);
    rd_adb_close(dev);
    free(escape), free(up), free(inside), free(out), free(src);
    at_board_stop(&fx);
}

/* The mapping of a command, checked by what /bin/sh makes of it: one argument per line. */
static char *sh_words(const char *root, const char *cmd)
{
    char *mapped = board_map_command(root, cmd);
    if (!mapped)
        return NULL;
    char *line = NULL;
    size_t cap = strlen(mapped) + 64;
    line = malloc(cap);
    snprintf(line, cap, "printf '%%s\\n' %s", mapped);
    free(mapped);
    FILE *p = popen(line, "r");
    free(line);
    if (!p)
        return NULL;
    char *out = calloc(1, 16384);
    size_t n = fread(out, 1, 16383, p);
    out[n] = '\0';
    pclose(p);
    return out;
}

/* text with {R}, {P}, {T} replaced by values[0..2]; malloc'ed */
static char *subst(const char *text, const char *values[3])
{
    char *out = calloc(1, 16384);
    size_t n = 0;
    for (const char *t = text; *t && n < 16000;) {
        const char *v = NULL;
        if (t[0] == '{' && t[1] && t[2] == '}')
            v = t[1] == 'R' ? values[0] : t[1] == 'P' ? values[1] : t[1] == 'T' ? values[2] : NULL;
        if (v) {
            n += (size_t)snprintf(out + n, 16384 - n, "%s", v);
            t += 3;
        } else {
            out[n++] = *t++;
        }
    }
    return out;
}

static void test_map_command(void)
{
    char *dir = rd_test_tmpdir("sec-map");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    /* a root with a space and a quote in its path, with userdata/ and tmp/ */
    char *root = at_join(dir, "board root's");
    char *ud = at_join(root, "userdata"), *tmp = at_join(root, "tmp");
    mkdir(root, 0755), mkdir(ud, 0755), mkdir(tmp, 0755);
    /* a host program under a folder with a space, and under /tmp */
    char *bindir = at_join(dir, "my clone");
    char *prog = at_join(bindir, "rknn-diag");
    mkdir(bindir, 0755);
    CU_ASSERT_TRUE(at_write_file(prog, 10, 1));
    char tmpprog[64];
    snprintf(tmpprog, sizeof tmpprog, "/tmp/rd-map-test-%d", (int)getpid());
    CU_ASSERT_TRUE(at_write_file(tmpprog, 10, 2));
    static const struct {
        const char *cmd, *want; /* {R}: the root, {P}: the program, {T}: the /tmp program */
    } cases[] = {
        {"ls /userdata/dumps", "ls\n{R}/userdata/dumps\n"},
        {"'{P}' board-run /userdata/m.onnx", "{P}\nboard-run\n{R}/userdata/m.onnx\n"},
        {"{T} --x /tmp/dumps", "{T}\n--x\n{R}/tmp/dumps\n"},
        {"A=/userdata/d B='/userdata/a b' \"/data/x\"", "A={R}/userdata/d\nB={R}/userdata/a b\n{R}/data/x\n"},
        {"/nonexistent-rd/x /etc/passwd /", "{R}/nonexistent-rd/x\n/etc/passwd\n/\n"},
    };
    const char *values[3] = {root, prog, tmpprog};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *cmd = subst(cases[i].cmd, values), *want = subst(cases[i].want, values);
        char *got = sh_words(root, cmd);
        CU_ASSERT_PTR_NOT_NULL(got);
        if (got && strcmp(got, want) != 0)
            fprintf(stderr, "map case %zu: %s\ngot:\n%swant:\n%s", i, cmd, got, want);
        CU_ASSERT_TRUE(got && strcmp(got, want) == 0);
        free(got), free(cmd), free(want);
    }
    unlink(tmpprog);
    at_rm_rf(dir);
    free(dir), free(root), free(ud), free(tmp), free(bindir), free(prog);
}

RD_TEST_REGISTER(register_board_security)
{
    RD_SUITE("adb_board_security", {"default keys: own in, stranger out", test_default_keys},
             {"--adb-keys", test_keys_file}, {"--bind", test_bind}, {"shell commands confined", test_shell_confined},
             {"sync stays in the folder", test_sync_confined}, {"board paths in commands", test_map_command});
}
