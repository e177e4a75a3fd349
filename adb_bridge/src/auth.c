/*
 * auth.c: ADB's RSA authentication with OpenSSL libcrypto. Keys come from ADB_VENDOR_KEYS and
 * <home>/.android/adbkey (PEM, created as a 2048-bit key with mode 0600 when absent, with
 * adbkey.pub next to it). A token is signed as adb does: RSA_sign(NID_sha1) over the 20 raw bytes,
 * i.e. PKCS#1 v1.5 with the SHA-1 DigestInfo and the token standing in for the digest. The public
 * key travels in Android's RSAPublicKey layout (modulus words, n0inv, n, rr, e; little endian),
 * base64-encoded. Private key bytes never enter a message.
 */
#include "adb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PUBKEY_MODULUS_SIZE 256
#define PUBKEY_ENCODED_SIZE (3 * 4 + 2 * PUBKEY_MODULUS_SIZE)
#define MAX_KEYS 32

struct adb_keys {
    EVP_PKEY *key[MAX_KEYS];
    size_t n;
    size_t user; /* index of the user key (the one whose public key is offered) */
};

size_t adb_keys_count(const adb_keys *k)
{
    return k ? k->n : 0;
}

void adb_keys_free(adb_keys *k)
{
    if (!k) return;
    for (size_t i = 0; i < k->n; i++)
        EVP_PKEY_free(k->key[i]);
    free(k);
}

static EVP_PKEY *read_key(const char *path)
{
    FILE *f; /* a FIFO or device under a key's name is refused at once, not waited on */
    if (rd_file_fopen_read(path, 0, (uint64_t)1 << 20, &f, NULL) != RD_OK) return NULL;
    EVP_PKEY *pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    if (pk && EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA) {
        EVP_PKEY_free(pk);
        return NULL;
    }
    return pk;
}

static void add_key(adb_keys *k, EVP_PKEY *pk)
{
    if (!pk) return;
    if (k->n < MAX_KEYS)
        k->key[k->n++] = pk;
    else
        EVP_PKEY_free(pk);
}

/* ADB_VENDOR_KEYS: ':'-separated files, or folders whose *.adb_key files are keys. */
static void load_vendor_keys(adb_keys *k)
{
    const char *env = getenv("ADB_VENDOR_KEYS");
    if (!env || !*env) return;
    char *copy = strdup(env);
    if (!copy) return;
    char *save = NULL;
    for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (stat(item, &st) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            add_key(k, read_key(item));
            continue;
        }
        DIR *d = opendir(item);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 8 && strcmp(e->d_name + l - 8, ".adb_key") == 0) {
                char p[4096];
                snprintf(p, sizeof p, "%s/%s", item, e->d_name);
                add_key(k, read_key(p));
            }
        }
        closedir(d);
    }
    free(copy);
}

rd_status adb_pubkey_encode(const void *evp_pkey, uint8_t out[PUBKEY_ENCODED_SIZE], rd_error *err)
{
    const EVP_PKEY *pk = evp_pkey;
    BIGNUM *n = NULL, *e = NULL, *r = BN_new(), *rr = BN_new(), *n0 = BN_new();
    BN_CTX *ctx = BN_CTX_new();
    rd_status st = RD_OK;
    if (!r || !rr || !n0 || !ctx || !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_N, &n) ||
        !EVP_PKEY_get_bn_param(pk, OSSL_PKEY_PARAM_RSA_E, &e)) {
        st = rd_errorf(err, RD_E_NOMEM, "cannot read the RSA key's modulus");
        goto out;
    }
    if (BN_num_bits(n) != 2048) {
        st = rd_errorf(err, RD_E_UNSUPPORTED, "ADB needs a 2048-bit RSA key, this one has %d bits",
                       BN_num_bits(n));
        goto out;
    }
    /* n0inv = -1 / n mod 2^32, by Newton's iteration on the low word */
    uint8_t low[PUBKEY_MODULUS_SIZE];
    BN_bn2lebinpad(n, low, sizeof low);
    uint32_t n0w = adb_get_u32(low);
    uint32_t inv = n0w;
    for (int i = 0; i < 5; i++)
        inv *= 2u - n0w * inv;
    adb_put_u32(out, PUBKEY_MODULUS_SIZE / 4);
    adb_put_u32(out + 4, (uint32_t)(0u - inv));
    memcpy(out + 8, low, PUBKEY_MODULUS_SIZE);
    /* rr = (2^2048)^2 mod n */
    if (!BN_set_bit(r, 4096) || !BN_mod(rr, r, n, ctx)) {
        st = rd_errorf(err, RD_E_NOMEM, "bignum arithmetic failed");
        goto out;
    }
    BN_bn2lebinpad(rr, out + 8 + PUBKEY_MODULUS_SIZE, PUBKEY_MODULUS_SIZE);
    adb_put_u32(out + 8 + 2 * PUBKEY_MODULUS_SIZE, (uint32_t)BN_get_word(e));
out:
    BN_free(n);
    BN_free(e);
    BN_free(r);
    BN_free(rr);
    BN_free(n0);
    BN_CTX_free(ctx);
    return st;
}

static rd_status public_text(EVP_PKEY *pk, char **out, rd_error *err)
{
    uint8_t raw[PUBKEY_ENCODED_SIZE];
    rd_status st = adb_pubkey_encode(pk, raw, err);
    if (st != RD_OK) return st;
    const char *user = getenv("USER");
    if (!user || !*user) user = getenv("LOGNAME");
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    size_t b64 = 4 * ((PUBKEY_ENCODED_SIZE + 2) / 3);
    size_t cap = b64 + 1 + 2 * 256 + 4;
    char *text = malloc(cap);
    if (!text) return rd_errorf(err, RD_E_NOMEM, "out of memory");
    int w = EVP_EncodeBlock((unsigned char *)text, raw, PUBKEY_ENCODED_SIZE);
    snprintf(text + w, cap - (size_t)w, " %s@%s", user && *user ? user : "unknown", host);
    *out = text;
    return RD_OK;
}

rd_status adb_keys_public_text(const adb_keys *k, char **out, rd_error *err)
{
    if (!k || k->n == 0) return rd_errorf(err, RD_E_AUTH, "no ADB key is loaded");
    return public_text(k->key[k->user], out, err);
}

static rd_status write_file_0600(const char *path, const char *data, size_t n, rd_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return rd_errorf(err, RD_E_IO, "cannot create %s: %s", path, strerror(errno));
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, data + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            close(fd);
            return rd_errorf(err, RD_E_IO, "cannot write %s: %s", path, strerror(errno));
        }
        done += (size_t)w;
    }
    if (close(fd) != 0)
        return rd_errorf(err, RD_E_IO, "cannot write %s: %s", path, strerror(errno));
    return RD_OK;
}

/* Creates <dir>/adbkey (PKCS#8 PEM, 0600) and adbkey.pub, as adb does on first start. */
static rd_status create_user_key(const char *dir, const char *path, EVP_PKEY **out, rd_error *err)
{
    if (mkdir(dir, 0750) != 0 && errno != EEXIST)
        return rd_errorf(err, RD_E_IO, "cannot create %s: %s", dir, strerror(errno));
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    if (!pk) return rd_errorf(err, RD_E_NOMEM, "cannot generate an RSA key");
    BIO *mem = BIO_new(BIO_s_mem());
    char *pem = NULL;
    long pem_len = 0;
    rd_status st = RD_OK;
    if (!mem || !PEM_write_bio_PrivateKey(mem, pk, NULL, NULL, 0, NULL, NULL) ||
        (pem_len = BIO_get_mem_data(mem, &pem)) <= 0) {
        st = rd_errorf(err, RD_E_NOMEM, "cannot encode the new key");
        goto out;
    }
    st = write_file_0600(path, pem, (size_t)pem_len, err);
    if (st != RD_OK) goto out;
    char *pub = NULL;
    st = public_text(pk, &pub, err);
    if (st != RD_OK) goto out;
    char pub_path[4200];
    snprintf(pub_path, sizeof pub_path, "%s.pub", path);
    size_t pl = strlen(pub);
    pub[pl] = '\0';
    unlink(pub_path);
    int fd = open(pub_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, pub, pl);
        (void)w;
        close(fd);
    }
    free(pub);
out:
    BIO_free(mem);
    if (st == RD_OK)
        *out = pk;
    else
        EVP_PKEY_free(pk);
    return st;
}

rd_status adb_keys_load(const char *home, adb_keys **out, rd_error *err)
{
    if (!home) home = getenv("HOME");
    if (!home || !*home)
        return rd_errorf(err, RD_E_AUTH,
                         "HOME is not set, so there is no ~/.android/adbkey to sign with");
    adb_keys *k = calloc(1, sizeof *k);
    if (!k) return rd_errorf(err, RD_E_NOMEM, "out of memory");
    load_vendor_keys(k);
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/.android", home);
    snprintf(path, sizeof path, "%s/adbkey", dir);
    EVP_PKEY *user = NULL;
    if (access(path, F_OK) == 0) {
        user = read_key(path);
        if (!user) {
            adb_keys_free(k);
            return rd_errorf(err, RD_E_AUTH, "%s is not a readable PEM RSA private key", path);
        }
    } else {
        rd_status st = create_user_key(dir, path, &user, err);
        if (st != RD_OK) {
            adb_keys_free(k);
            return st;
        }
    }
    if (k->n == MAX_KEYS) EVP_PKEY_free(k->key[--k->n]);
    k->user = k->n;
    k->key[k->n++] = user;
    *out = k;
    return RD_OK;
}

rd_status adb_keys_sign(const adb_keys *k, size_t i, const uint8_t *token, size_t token_len,
                        uint8_t *sig, size_t *sig_len, rd_error *err)
{
    if (token_len != ADB_TOKEN_SIZE)
        return rd_errorf(err, RD_E_DEVICE, "the board sent an AUTH token of %zu bytes, expected %d",
                         token_len, ADB_TOKEN_SIZE);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k->key[i], NULL);
    size_t len = 512;
    if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) <= 0 ||
        EVP_PKEY_sign(ctx, sig, &len, token, token_len) <= 0) {
        EVP_PKEY_CTX_free(ctx);
        return rd_errorf(err, RD_E_AUTH, "signing the board's token with key %zu failed", i + 1);
    }
    EVP_PKEY_CTX_free(ctx);
    *sig_len = len;
    return RD_OK;
}

bool adb_pubkey_verify(const char *pub_text, const uint8_t *token, size_t token_len,
                       const uint8_t *sig, size_t sig_len)
{
    size_t tl = strcspn(pub_text, " \n\r\t");
    if (tl < 4 * ((PUBKEY_ENCODED_SIZE + 2) / 3) || tl > 2048) return false;
    unsigned char raw[2048];
    int rl = EVP_DecodeBlock(raw, (const unsigned char *)pub_text, (int)tl);
    if (rl < PUBKEY_ENCODED_SIZE || adb_get_u32(raw) != PUBKEY_MODULUS_SIZE / 4) return false;
    BIGNUM *n = BN_lebin2bn(raw + 8, PUBKEY_MODULUS_SIZE, NULL);
    BIGNUM *e = BN_new();
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *fctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *pk = NULL;
    EVP_PKEY_CTX *vctx = NULL;
    bool ok = false;
    if (!n || !e || !bld || !fctx ||
        !BN_set_word(e, adb_get_u32(raw + 8 + 2 * PUBKEY_MODULUS_SIZE)))
        goto out;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!params || EVP_PKEY_fromdata_init(fctx) <= 0 ||
        EVP_PKEY_fromdata(fctx, &pk, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        goto out;
    vctx = EVP_PKEY_CTX_new(pk, NULL);
    if (!vctx || EVP_PKEY_verify_init(vctx) <= 0 ||
        EVP_PKEY_CTX_set_rsa_padding(vctx, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_signature_md(vctx, EVP_sha1()) <= 0)
        goto out;
    ok = EVP_PKEY_verify(vctx, sig, sig_len, token, token_len) == 1;
out:
    EVP_PKEY_CTX_free(vctx);
    EVP_PKEY_free(pk);
    EVP_PKEY_CTX_free(fctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    BN_free(n);
    BN_free(e);
    return ok;
}
