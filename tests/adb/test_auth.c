/* test_auth.c: key creation (mode 0600, Android public key format), signing as adb does, vendor
 * keys. */
#include "adb_internal.h"
#include "adb_test_util.h"
#include "rd_test.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
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

RD_TEST_REGISTER(register_auth)
{
    RD_SUITE("adb_auth", {"create, format, sign", test_create_and_sign});
}
