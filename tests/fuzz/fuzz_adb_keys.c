/*
 * fuzz_adb_keys.c: the key-file parsers of adb_bridge/src/auth.c. The first byte chooses the
 * format: even, a list of public keys in adbd's adb_keys format (what --adb-keys and adbkey.pub
 * hold); odd, a PEM private key (~/.android/adbkey, ADB_VENDOR_KEYS), which must never ask for a
 * passphrase. Oracle: every public key accepted decodes to the 524-byte RSAPublicKey it claims to
 * be, so it verifies nothing it should not (a zero token is never signed by it).
 *
 * Build needs (for tests/fuzz/tests.cmake): rd_adb_internal (adb_internal.h, OpenSSL).
 */
#include "adb_internal.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT (256u * 1024u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX_INPUT)
        return 0;
    size_t n = size - 1;
    char *text = malloc(n + 1); /* exact size, plus the NUL callers of the file reader get */
    if (!text)
        return 0;
    if (n)
        memcpy(text, data + 1, n);
    text[n] = '\0';
    rd_error err;
    if (data[0] % 2 == 0) {
        char **keys = NULL;
        size_t count = 0;
        if (adb_pubkeys_parse(text, n, "fuzz", NULL, NULL, &keys, &count, &err) == RD_OK) {
            uint8_t token[ADB_TOKEN_SIZE] = {0}, sig[256] = {0};
            for (size_t i = 0; i < count; i++) {
                if (strlen(keys[i]) != 700)
                    abort(); /* base64 of exactly 524 bytes */
                if (adb_pubkey_verify(keys[i], token, sizeof token, sig, sizeof sig))
                    abort();
            }
            adb_pubkeys_free(keys, count);
        }
    } else {
        void *pk = NULL;
        if (adb_key_parse(text, n, "fuzz", &pk, &err) == RD_OK)
            EVP_PKEY_free(pk);
    }
    free(text);
    return 0;
}
