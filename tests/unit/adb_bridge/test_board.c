/*
 * test_board.c: our client against the fake board, both in this process over loopback TCP: every
 * pulled tree compared with the source, with auth on and off, both protocol versions, payload
 * limits of 256 B, 4 KiB and 1 MiB, and every fault the board can inject.
 */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "rd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef at_board fixture;

static const char *fx_features; /* NULL: the board's default */

static bool fx_start(fixture *fx, const char *tag, bool auth, uint32_t version, uint32_t max_payload,
                     const char *faults)
{
    /* with auth, the board knows a stranger's key only, so our client's key goes through the
     * "accept it on the board" flow (accepted after 50 ms) */
    char *stranger = rd_test_tmpdir("stranger-key");
    char *keys = stranger ? at_join(stranger, ".android/adbkey.pub") : NULL;
    char *pub = NULL;
    rd_error kerr;
    if (!keys || (auth && adb_user_public_key(stranger, &pub, &kerr) != RD_OK)) {
        fprintf(stderr, "a stranger's key: %s\n", keys ? kerr.msg : "no folder");
        free(stranger);
        free(keys);
        return false;
    }
    free(pub);
    rd_board_options bo = {.no_auth = !auth,
                           .adb_keys = auth ? keys : NULL,
                           .accept_new_keys_ms = 50,
                           .version = version,
                           .max_payload = max_payload,
                           .faults = faults,
                           .features = fx_features};
    bool ok = at_board_start(fx, tag, &bo, true);
    at_rm_rf(stranger);
    free(stranger);
    free(keys);
    return ok;
}

static void fx_stop(fixture *fx)
{
    at_board_stop(fx);
}

/* Pulls /userdata/dumps into dir/out and checks the tree; returns the status of the pull. */
static rd_status pull_and_compare(fixture *fx, rd_adb *dev, bool expect_equal, rd_error *err)
{
    char *out = at_join(fx->dir, "out");
    at_rm_rf(out);
    mkdir(out, 0755);
    rd_status st = rd_adb_pull(dev, "/userdata/dumps", out, NULL, NULL, err);
    char *got = at_join(out, "dumps");
    if (expect_equal)
        CU_ASSERT_TRUE(at_trees_equal(fx->dumps, got));
    free(got);
    free(out);
    return st;
}

static void run_config(const char *tag, bool auth, uint32_t version, uint32_t max_payload)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_start(&fx, tag, auth, version, max_payload, NULL));
    rd_adb *dev = NULL;
    rd_error err;
    at_log log;
    at_log_init(&log);
    rd_status st = at_board_open(&fx, 5000, &log, &dev, &err);
    CU_ASSERT_EQUAL_FATAL(st, RD_OK);
    CU_ASSERT_STRING_EQUAL(rd_adb_transport_name(dev), "tcp");
    bool v2shell = adb_has_feature(rd_adb_features(dev), "shell_v2");
    CU_ASSERT_EQUAL(v2shell, fx_features == NULL);
    if (auth)
        CU_ASSERT_TRUE(at_log_has(&log, "accept it on the board"));
    CU_ASSERT_EQUAL(pull_and_compare(&fx, dev, true, &err), RD_OK);
    /* shell: output and exit status */
    char *text = NULL;
    int code = -1;
    CU_ASSERT_EQUAL(rd_adb_shell_capture(dev, "ls /userdata/dumps | wc -l; exit 3", &text, NULL, &code, &err), RD_OK);
    CU_ASSERT_EQUAL(code, v2shell ? 3 : 0); /* shell: has no exit status */
    CU_ASSERT_PTR_NOT_NULL(text);
    if (text)
        CU_ASSERT_EQUAL(strtol(text, NULL, 10), 11);
    free(text);
    rd_adb_close(dev);
    if (auth) { /* the key is now trusted: the second connection signs and gets in without an offer
                 */
        at_log log2;
        at_log_init(&log2);
        CU_ASSERT_EQUAL(at_board_open(&fx, 5000, &log2, &dev, &err), RD_OK);
        CU_ASSERT_FALSE(at_log_has(&log2, "accept it"));
        rd_adb_close(dev);
    }
    fx_stop(&fx);
}

static void test_noauth_v2(void)
{
    run_config("board-noauth", false, 0, 0);
}
static void test_auth(void)
{
    run_config("board-auth", true, 0, 0);
}
static void test_v1_checksums(void)
{
    run_config("board-v1", false, 0x01000000, 0); /* the board refuses packets with wrong sums */
}
static void test_v1_auth_4k(void)
{
    run_config("board-v1-4k", true, 0x01000000, 4096);
}
static void test_payload_4k(void)
{
    run_config("board-4k", false, 0, 4096);
}
static void test_payload_tiny(void)
{
    run_config("board-256", false, 0, 256);
}

static void test_old_board(void)
{
    fx_features = "cmd"; /* no shell_v2, stat_v2, ls_v2: STAT, LIST and shell: */
    run_config("board-old", false, 0x01000000, 4096);
    fx_features = NULL;
}

static void test_api(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_start(&fx, "board-api", false, 0, 0, NULL));
    rd_adb *dev = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(at_board_open(&fx, 5000, NULL, &dev, &err), RD_OK);
    rd_adb_stat sb;
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/userdata/dumps/004_512.npy", &sb, &err), RD_OK);
    CU_ASSERT_TRUE(sb.exists);
    CU_ASSERT_EQUAL(sb.size, 512u);
    CU_ASSERT_EQUAL(rd_adb_stat_path(dev, "/userdata/nope", &sb, &err), RD_OK);
    CU_ASSERT_FALSE(sb.exists);
    rd_adb_dirent *list = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(rd_adb_list(dev, "/userdata/dumps", &list, &n, &err), RD_OK);
    CU_ASSERT_EQUAL(n, 11u); /* 10 files + sub, no . and .. */
    rd_adb_dirents_free(list, n);
    /* single file into an existing folder, then to a new name */
    char *out = at_join(fx.dir, "single");
    mkdir(out, 0755);
    CU_ASSERT_EQUAL(rd_adb_pull(dev, "/userdata/dumps/007_65537.npy", out, NULL, NULL, &err), RD_OK);
    char *got = at_join(out, "007_65537.npy");
    struct stat st;
    CU_ASSERT_EQUAL(stat(got, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 65537);
    char *renamed = at_join(out, "renamed.npy");
    CU_ASSERT_EQUAL(rd_adb_pull(dev, "/userdata/dumps/007_65537.npy", renamed, NULL, NULL, &err), RD_OK);
    CU_ASSERT_EQUAL(stat(renamed, &st), 0);
    /* a folder to a path that does not exist yet lands at that path */
    char *newdir = at_join(fx.dir, "newdir");
    CU_ASSERT_EQUAL(rd_adb_pull(dev, "/userdata/dumps/", newdir, NULL, NULL, &err), RD_OK);
    CU_ASSERT_TRUE(at_trees_equal(fx.dumps, newdir));
    /* push a file and a folder */
    CU_ASSERT_EQUAL(rd_adb_push(dev, renamed, "/userdata/up/x.npy", NULL, NULL, &err), RD_OK);
    char *pushed = at_join(fx.root, "userdata/up/x.npy");
    CU_ASSERT_EQUAL(stat(pushed, &st), 0);
    CU_ASSERT_EQUAL(st.st_size, 65537);
    CU_ASSERT_EQUAL(rd_adb_push(dev, newdir, "/userdata", NULL, NULL, &err), RD_OK);
    char *pushed_dir = at_join(fx.root, "userdata/newdir");
    CU_ASSERT_TRUE(at_trees_equal(fx.dumps, pushed_dir));
    /* missing dump folder: the usual fix in the message */
    CU_ASSERT_EQUAL(rd_adb_pull(dev, "/tmp/dumps", out, NULL, NULL, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mkdir -p /tmp/dumps && chmod 777 /tmp/dumps"));
    at_rm_rf(fx.dumps);
    CU_ASSERT_EQUAL(rd_adb_pull(dev, NULL, out, NULL, NULL, &err), RD_E_NOTFOUND);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "mkdir -p /userdata/dumps && chmod 777 /userdata/dumps"));
    /* and the fix works through our shell, with paths mapped under the board's root */
    int code = -1;
    CU_ASSERT_EQUAL(rd_adb_shell(dev, "mkdir -p /userdata/dumps && chmod 777 /userdata/dumps", NULL, NULL, &code, &err),
                    RD_OK);
    CU_ASSERT_EQUAL(code, 0);
    CU_ASSERT_EQUAL(stat(fx.dumps, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0777);
    rd_adb_close(dev);
    free(out);
    free(got);
    free(renamed);
    free(newdir);
    free(pushed);
    free(pushed_dir);
    fx_stop(&fx);
}

/* A fault: the pull fails (or succeeds) with a message, leaves no temporary and no partial final
 * file.
 */
static void run_fault(const char *tag, const char *faults, rd_status want, const char *msg_part, int timeout_ms)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_start(&fx, tag, false, 0, 0, faults));
    rd_adb *dev = NULL;
    rd_error err;
    rd_status st = at_board_open(&fx, timeout_ms, NULL, &dev, &err);
    if (st == RD_OK) {
        st = pull_and_compare(&fx, dev, want == RD_OK, &err);
        rd_adb_close(dev);
    }
    CU_ASSERT_EQUAL(st, want);
    if (st != want || (msg_part && !strstr(err.msg, msg_part)))
        fprintf(stderr, "fault %s: status %s, message: %s\n", faults, rd_status_str(st), err.msg);
    if (msg_part)
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, msg_part));
    /* every file that exists under its final name is complete; no temporary file survives; nothing
     * escaped
     */
    char *out = at_join(fx.dir, "out/dumps");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s' -name '*.part' -o -name '.*.tmp')\"", fx.dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "cd '%s' 2>/dev/null || exit 0; find . -type f ! -exec cmp -s {} '%s'/{} \\; -print | "
             "grep -q . && exit 1; exit 0",
             out, fx.dumps);
    CU_ASSERT_EQUAL(system(cmd), 0);
    char *escaped = at_join(fx.dir, "x");
    CU_ASSERT_NOT_EQUAL(access(escaped, F_OK), 0);
    free(escaped);
    free(out);
    fx_stop(&fx);
}

static void test_fault_drop(void)
{
    run_fault("fault-drop", "drop:2000000", RD_E_DEVICE, "connection closed", 5000);
}
static void test_fault_corrupt(void)
{
    run_fault("fault-corrupt", "corrupt:5", RD_E_DEVICE, "corrupt packet", 5000);
}
static void test_fault_oversize(void)
{
    run_fault("fault-oversize", "oversize:5", RD_E_DEVICE, "oversized packet", 5000);
}
static void test_fault_stall(void)
{
    int64_t t0 = adb_now_ms();
    run_fault("fault-stall", "stall", RD_E_TIMEOUT, "no answer", 1000);
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 8000);
}
static void test_fault_recv_fail_retry(void)
{
    run_fault("fault-recvfail1", "recv-fail:1", RD_OK, NULL, 5000); /* retried on a new sync service */
}
static void test_fault_recv_fail(void)
{
    run_fault("fault-recvfail", "recv-fail:3", RD_E_DEVICE, "Permission denied", 5000);
}
static void test_fault_evil_names(void)
{
    run_fault("fault-evil1", "evil-name:../../x", RD_E_DEVICE, "refusing to write outside", 5000);
    run_fault("fault-evil2", "evil-name:a/b", RD_E_DEVICE, "refusing to write outside", 5000);
    run_fault("fault-evil3", "evil-name:/abs", RD_E_DEVICE, "refusing to write outside", 5000);
    run_fault("fault-evil4", "evil-name:..", RD_OK, NULL, 5000); /* ".." is skipped like adbd's own */
}
static void test_fault_grow(void)
{
    run_fault("fault-grow", "grow", RD_E_DEVICE, "more than the", 5000);
}
static void test_fault_unauthorized(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fx_start(&fx, "fault-unauth", true, 0, 0, "unauthorized"));
    rd_adb *dev = NULL;
    rd_error err;
    int64_t t0 = adb_now_ms();
    CU_ASSERT_EQUAL(at_board_open(&fx, 1000, NULL, &dev, &err), RD_E_AUTH);
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 5000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "accept it on the board"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "PRIVATE"));
    fx_stop(&fx);
}
static void test_no_board(void)
{
    rd_adb_options o = {.transport = RD_ADB_TCP, .connect = "127.0.0.1:1", .timeout_ms = 1000};
    rd_adb *dev = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(rd_adb_open(&o, &dev, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "127.0.0.1:1"));
    o.connect = "nonsense";
    CU_ASSERT_EQUAL(rd_adb_open(&o, &dev, &err), RD_E_USAGE);
    rd_board_options bo = {.root = "/nonexistent/root"};
    rd_board *b = NULL;
    CU_ASSERT_EQUAL(rd_board_start(&bo, &b, &err), RD_E_NOTFOUND);
    CU_ASSERT_EQUAL(rd_board_faults_check("drop:x", &err), RD_E_USAGE);
    CU_ASSERT_EQUAL(rd_board_faults_check("stall,recv-fail:2,evil-name:a/b", &err), RD_OK);
}

RD_TEST_REGISTER(register_board)
{
    RD_SUITE("adb_board", {"no auth, v0x01000001, 1 MiB", test_noauth_v2}, {"auth", test_auth},
             {"v0x01000000 checksums", test_v1_checksums}, {"v0x01000000 auth 4 KiB", test_v1_auth_4k},
             {"payload 4 KiB", test_payload_4k}, {"payload 256 B", test_payload_tiny},
             {"old board (v1 sync, shell:)", test_old_board}, {"api", test_api}, {"fault drop", test_fault_drop},
             {"fault corrupt", test_fault_corrupt}, {"fault oversize", test_fault_oversize},
             {"fault stall", test_fault_stall}, {"fault recv-fail retried", test_fault_recv_fail_retry},
             {"fault recv-fail", test_fault_recv_fail}, {"fault evil names", test_fault_evil_names},
             {"fault grow", test_fault_grow}, {"fault unauthorized", test_fault_unauthorized},
             {"no board", test_no_board});
}
