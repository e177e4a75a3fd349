/* test_auth_files.c: key files that are not files (a FIFO under ~/.android/adbkey or in ADB_VENDOR_KEYS)
 * are refused at once instead of blocking the connection forever. */
#include "adb_internal.h"
#include "rd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_fifo_keys(void)
{
    char *dir = rd_test_tmpdir("auth-fifo");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char android[4200], key[4300], vendor[4300];
    snprintf(android, sizeof android, "%s/.android", dir);
    snprintf(key, sizeof key, "%s/adbkey", android);
    snprintf(vendor, sizeof vendor, "%s/vendor.adb_key", dir);
    CU_ASSERT_EQUAL_FATAL(mkdir(android, 0700), 0);
    CU_ASSERT_EQUAL_FATAL(mkfifo(key, 0600), 0);
    CU_ASSERT_EQUAL_FATAL(mkfifo(vendor, 0600), 0);
    alarm(30); /* a regression that blocks on a FIFO ends the binary instead of hanging CTest */
    double t0 = rd_test_seconds();
    adb_keys *k = NULL;
    rd_error err;
    setenv("ADB_VENDOR_KEYS", vendor, 1);
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_E_AUTH); /* the user key: an error naming it */
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adbkey"));
    adb_keys_free(k);
    k = NULL;
    /* a FIFO among the vendor keys is skipped; a fresh user key is made and used */
    unlink(key);
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_OK);
    CU_ASSERT_EQUAL(adb_keys_count(k), 1u);
    CU_ASSERT(rd_test_seconds() - t0 < 20.0);
    alarm(0);
    unsetenv("ADB_VENDOR_KEYS");
    adb_keys_free(k);
    free(dir);
}

RD_TEST_REGISTER(register_auth_files)
{
    RD_SUITE("auth files", {"FIFO key files", test_fifo_keys});
}
