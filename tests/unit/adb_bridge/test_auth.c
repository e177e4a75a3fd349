/* test_auth.c: key creation (mode 0600, Android public key format), signing as adb does, vendor
 * keys. */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "rd_test.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void test_create_and_sign(void)
{
    char *dir = rd_test_tmpdir("auth");
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    adb_keys *k = NULL;
    rd_error err;
    unsetenv("ADB_VENDOR_KEYS");
    CU_ASSERT_EQUAL_FATAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_OK);
    CU_ASSERT_EQUAL(adb_keys_count(k), 1u);
    char *key = at_join(dir, ".android/adbkey");
    struct stat st;
    CU_ASSERT_EQUAL(stat(key, &st), 0);
    CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
    /* public key: 700 base64 chars of a 524-byte RSAPublicKey, then " user@host" */
    char *pub = NULL;
    CU_ASSERT_EQUAL_FATAL(adb_keys_public_text(k, &pub, &err), RD_OK);
    CU_ASSERT_EQUAL(strcspn(pub, " "), 700u);
    unsigned char raw[600];
    CU_ASSERT_TRUE(EVP_DecodeBlock(raw, (const unsigned char *)pub, 700) >= 524);
    CU_ASSERT_EQUAL(adb_get_u32(raw), 64u);
    uint32_t n0 = adb_get_u32(raw + 8), n0inv = adb_get_u32(raw + 4);
    CU_ASSERT_EQUAL((uint32_t)(n0 * n0inv), 0xffffffffu); /* n0inv = -1/n mod 2^32 */
    CU_ASSERT_EQUAL(adb_get_u32(raw + 520), 65537u);
    /* rr = 2^4096 mod n */
    BIGNUM *n = BN_lebin2bn(raw + 8, 256, NULL), *rr = BN_lebin2bn(raw + 264, 256, NULL);
    BIGNUM *r = BN_new(), *want = BN_new();
    BN_CTX *ctx = BN_CTX_new();
    BN_set_bit(r, 4096);
    BN_mod(want, r, n, ctx);
    CU_ASSERT_EQUAL(BN_cmp(want, rr), 0);
    BN_free(n), BN_free(rr), BN_free(r), BN_free(want), BN_CTX_free(ctx);
    /* adbkey.pub matches */
    char *pubpath = at_join(dir, ".android/adbkey.pub");
    size_t len = 0;
    char *file = rd_test_read_file(pubpath, &len);
    CU_ASSERT_TRUE(file && len >= 700 && memcmp(file, pub, 700) == 0);
    free(file);
    /* sign a token and verify as the board does */
    uint8_t token[20], sig[512];
    for (int i = 0; i < 20; i++)
        token[i] = (uint8_t)(i * 13);
    size_t sl = 0;
    CU_ASSERT_EQUAL(adb_keys_sign(k, 0, token, 20, sig, &sl, &err), RD_OK);
    CU_ASSERT_EQUAL(sl, 256u);
    CU_ASSERT_TRUE(adb_pubkey_verify(pub, token, 20, sig, sl));
    token[0] ^= 1;
    CU_ASSERT_FALSE(adb_pubkey_verify(pub, token, 20, sig, sl));
    CU_ASSERT_FALSE(adb_pubkey_verify("short", token, 20, sig, sl));
    CU_ASSERT_EQUAL(adb_keys_sign(k, 0, token, 19, sig, &sl, &err), RD_E_DEVICE);
    /* the key is reused, not recreated */
    adb_keys *k2 = NULL;
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k2, &err), RD_OK);
    char *pub2 = NULL;
    adb_keys_public_text(k2, &pub2, &err);
    CU_ASSERT_TRUE(pub2 && strncmp(pub, pub2, 700) == 0);
    /* a vendor key comes first; the user key is still the one offered */
    setenv("ADB_VENDOR_KEYS", key, 1);
    adb_keys *k3 = NULL;
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k3, &err), RD_OK);
    CU_ASSERT_EQUAL(adb_keys_count(k3), 2u);
    unsetenv("ADB_VENDOR_KEYS");
    /* a broken key file: an error naming the file, and no key material */
    FILE *f = fopen(key, "w");
    fputs("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n", f);
    fclose(f);
    adb_keys *k4 = NULL;
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k4, &err), RD_E_AUTH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adbkey"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "not a key"));
    adb_keys_free(k), adb_keys_free(k2), adb_keys_free(k3);
    free(pub), free(pub2), free(key), free(pubpath);
    at_rm_rf(dir);
    free(dir);
}

/* ---- unusable keys say what to do (issue 16, defect 10) ---- */

static char *key_dir(const char *tag, char **key)
{
    char *dir = rd_test_tmpdir(tag);
    char *android = at_join(dir, ".android");
    mkdir(android, 0700);
    *key = at_join(android, "adbkey");
    free(android);
    unsetenv("ADB_VENDOR_KEYS");
    return dir;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Files in dir/.android other than adbkey and adbkey.pub (a temporary file left over). */
static int strays(const char *dir)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "test -z \"$(find '%s/.android' -type f ! -name adbkey ! -name adbkey.pub)\"", dir);
    return system(cmd);
}

static void test_empty_key(void)
{
    char *key = NULL, *dir = key_dir("auth-empty", &key);
    write_text(key, "");
    adb_keys *k = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_E_AUTH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "is empty (0 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "delete it"));
    /* following the advice works */
    unlink(key);
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_OK);
    adb_keys_free(k);
    at_rm_rf(dir);
    free(dir), free(key);
}

static void test_encrypted_key(void)
{
    char *key = NULL, *dir = key_dir("auth-encrypted", &key);
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    FILE *f = fopen(key, "w");
    CU_ASSERT_TRUE_FATAL(pk && f);
    CU_ASSERT_TRUE(PEM_write_PrivateKey(f, pk, EVP_aes_128_cbc(), NULL, 0, NULL, "secret") == 1);
    fclose(f);
    EVP_PKEY_free(pk);
    adb_keys *k = NULL;
    rd_error err;
    int64_t t0 = adb_now_ms();
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_E_AUTH); /* no prompt */
    CU_ASSERT_TRUE(adb_now_ms() - t0 < 5000);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "encrypted with a passphrase"));
    CU_ASSERT_PTR_NULL(strstr(err.msg, "ENCRYPTED PRIVATE KEY"));
    at_rm_rf(dir);
    free(dir), free(key);
}

static void collect(void *user, const char *msg)
{
    char *buf = user;
    size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s\n", msg);
}

/* A broken user key does not stop a good vendor key; a broken vendor key does not stop the user's.
 */
static void test_vendor_keys_survive(void)
{
    char *key = NULL, *dir = key_dir("auth-vendor", &key);
    char *vdir = at_join(dir, "vendor");
    mkdir(vdir, 0755);
    adb_keys *k = NULL;
    rd_error err;
    CU_ASSERT_EQUAL_FATAL(adb_keys_load(vdir, NULL, NULL, &k, &err), RD_OK); /* a good key */
    adb_keys_free(k);
    char *vkey = at_join(vdir, ".android/adbkey");
    write_text(key, "-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n");
    setenv("ADB_VENDOR_KEYS", vkey, 1);
    char log[4096] = "";
    CU_ASSERT_EQUAL_FATAL(adb_keys_load(dir, collect, log, &k, &err), RD_OK);
    CU_ASSERT_EQUAL(adb_keys_count(k), 1u);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "not signing with the user key"));
    uint8_t token[20] = {1, 2, 3}, sig[512];
    size_t sl = 0;
    CU_ASSERT_EQUAL(adb_keys_sign(k, 0, token, 20, sig, &sl, &err), RD_OK);
    char *pub = NULL;
    CU_ASSERT_EQUAL(adb_keys_public_text(k, &pub, &err), RD_E_AUTH);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "user key is unusable"));
    adb_keys_free(k);
    /* and the other way round */
    unlink(key);
    char *bad = at_join(dir, "bad.key");
    write_text(bad, "");
    setenv("ADB_VENDOR_KEYS", bad, 1);
    log[0] = '\0';
    CU_ASSERT_EQUAL(adb_keys_load(dir, collect, log, &k, &err), RD_OK);
    CU_ASSERT_EQUAL(adb_keys_count(k), 1u);
    CU_ASSERT_PTR_NOT_NULL(strstr(log, "ADB_VENDOR_KEYS: skipping a key"));
    CU_ASSERT_EQUAL(adb_keys_public_text(k, &pub, &err), RD_OK);
    free(pub);
    adb_keys_free(k);
    unsetenv("ADB_VENDOR_KEYS");
    at_rm_rf(dir);
    free(dir), free(key), free(vdir), free(vkey), free(bad);
}

/* A full disk while the key is created: no key, no temporary file, and the next run creates it. */
static void test_key_creation_full_disk(void)
{
    char *key = NULL, *dir = key_dir("auth-full", &key);
    struct rlimit old;
    getrlimit(RLIMIT_FSIZE, &old);
    struct rlimit tiny = {.rlim_cur = 100, .rlim_max = old.rlim_max};
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CU_ASSERT_EQUAL(setrlimit(RLIMIT_FSIZE, &tiny), 0);
    adb_keys *k = NULL;
    rd_error err;
    rd_status st = adb_keys_load(dir, NULL, NULL, &k, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    CU_ASSERT_EQUAL(st, RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "creating the ADB key"));
    CU_ASSERT_NOT_EQUAL(access(key, F_OK), 0);
    CU_ASSERT_EQUAL(strays(dir), 0);
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_OK);
    adb_keys_free(k);
    at_rm_rf(dir);
    free(dir), free(key);
}

/* adbkey.pub cannot be written: an error, and the new private key is not kept either. */
static void test_pub_write_error(void)
{
    char *key = NULL, *dir = key_dir("auth-pub", &key);
    char *pub = at_join(dir, ".android/adbkey.pub");
    CU_ASSERT_EQUAL(mkdir(pub, 0755), 0); /* a folder in the way */
    adb_keys *k = NULL;
    rd_error err;
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_E_IO);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "adbkey.pub"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nothing was kept"));
    CU_ASSERT_NOT_EQUAL(access(key, F_OK), 0);
    CU_ASSERT_EQUAL(strays(dir), 0);
    rmdir(pub);
    CU_ASSERT_EQUAL(adb_keys_load(dir, NULL, NULL, &k, &err), RD_OK);
    struct stat st;
    CU_ASSERT_TRUE(stat(pub, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 700);
    adb_keys_free(k);
    at_rm_rf(dir);
    free(dir), free(key), free(pub);
}

/* HOME unset: the user's home folder from the password database, as adb does. */
static void test_home_fallback(void)
{
    const char *home = getenv("HOME");
    char *saved = home ? strdup(home) : NULL;
    unsetenv("HOME");
    char path[4200];
    rd_error err;
    rd_status st = adb_user_key_path(NULL, path, sizeof path, &err);
    if (saved)
        setenv("HOME", saved, 1);
    struct passwd *pw = getpwuid(getuid());
    if (pw && pw->pw_dir && *pw->pw_dir) {
        CU_ASSERT_EQUAL(st, RD_OK);
        char want[4200];
        snprintf(want, sizeof want, "%s/.android/adbkey", pw->pw_dir);
        CU_ASSERT_STRING_EQUAL(path, want);
    } else {
        CU_ASSERT_EQUAL(st, RD_E_AUTH);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "set HOME"));
    }
    free(saved);
}

RD_TEST_REGISTER(register_auth)
{
    RD_SUITE("adb_auth", {"create, format, sign", test_create_and_sign}, {"0-byte key", test_empty_key},
             {"encrypted key: no prompt", test_encrypted_key}, {"vendor keys survive", test_vendor_keys_survive},
             {"key creation on a full disk", test_key_creation_full_disk},
             {"adbkey.pub write error", test_pub_write_error}, {"HOME unset", test_home_fallback});
}
