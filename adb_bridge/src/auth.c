/*
 * auth.c: ADB's RSA authentication with OpenSSL libcrypto. Keys come from ADB_VENDOR_KEYS and
 * <home>/.android/adbkey (PEM, created as a 2048-bit key with mode 0600 when absent, with
 * adbkey.pub next to it, both written whole or not at all). A token is signed as adb does:
 * RSA_sign(NID_sha1) over the 20 raw bytes, i.e. PKCS#1 v1.5 with the SHA-1 DigestInfo and the
 * token standing in for the digest. The public key travels in Android's RSAPublicKey layout
 * (modulus words, n0inv, n, rr, e; little endian), base64-encoded.
 *
 * Key files are outside data: only regular files of at most 64 KiB are read (a FIFO never blocks),
 * an encrypted key is refused instead of asking for a passphrase on the terminal, and an unusable
 * key says what to do. An unusable user key does not stop ADB_VENDOR_KEYS (it is skipped with a
 * log line). Private key bytes never enter a message.
 */
#include "adb_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PUBKEY_MODULUS_SIZE 256
#define PUBKEY_ENCODED_SIZE (3 * 4 + 2 * PUBKEY_MODULUS_SIZE)
#define MAX_KEYS 32

#define KEY_FILE_MAX (64u * 1024u)            /* a private key file */
#define PUBKEYS_FILE_MAX (4u * 1024u * 1024u) /* a list of public keys (adb_keys) */

struct adb_keys {
    EVP_PKEY *key[MAX_KEYS];
    size_t n;
    bool has_user;      /* the user key loaded (the one whose public key is offered) */
    size_t user;        /* its index */
    char user_why[400]; /* when it did not load: why, and what to do */
};

size_t adb_keys_count(const adb_keys *k)
{
    return k ? k->n : 0;
}

void adb_keys_free(adb_keys *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++)
        EVP_PKEY_free(k->key[i]);
    free(k);
}

/* Reads a key file through the project's reader (a regular file only, so a FIFO never blocks; at
 * most cap bytes), NUL-terminated. RD_E_NOTFOUND when it does not exist. */
static rd_status read_key_file(const char *path, size_t cap, char **out, size_t *len, rd_error *err)
{
    return rd_file_read_all(NULL, path, cap, out, len, err);
}

/* The passphrase callback: never asks (OpenSSL's default would prompt on the terminal). */
static int no_passphrase(char *buf, int size, int rwflag, void *user)
{
    (void)buf, (void)size, (void)rwflag, (void)user;
    return -1;
}

rd_status adb_key_parse(const char *text, size_t len, const char *name, void **out, rd_error *err)
{
    static const char *fix = "delete it (and its .pub) to have a new key created, or restore it "
                             "from a backup; boards that trusted the old key ask to accept the "
                             "new one";
    EVP_PKEY *pk = NULL;
    rd_status st = RD_OK;
    if (len == 0) {
        st = rd_errorf(err, RD_E_AUTH, "%s is empty (0 bytes; the disk was full when it was written?): %s", name, fix);
    } else if (len > KEY_FILE_MAX || memmem(text, len, "ENCRYPTED", 9)) {
        st = len > KEY_FILE_MAX ? rd_errorf(err, RD_E_LIMIT, "%s is %zu bytes, too large for a key", name, len)
                                : rd_errorf(err, RD_E_AUTH,
                                            "%s is encrypted with a passphrase, which ADB keys never are: "
                                            "decrypt it (openssl pkey -in KEY -out PLAIN, then put PLAIN in its "
                                            "place with mode 600) or %s",
                                            name, fix);
    } else {
        BIO *bio = BIO_new_mem_buf(text, (int)len);
        pk = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
        BIO_free(bio);
        if (!pk)
            st = rd_errorf(err, RD_E_AUTH, "%s is not a PEM private key (damaged?): %s", name, fix);
        else if (EVP_PKEY_get_base_id(pk) != EVP_PKEY_RSA)
            st = rd_errorf(err, RD_E_AUTH, "%s holds a %s key; ADB signs with RSA: %s", name,
                           EVP_PKEY_get0_type_name(pk) ? EVP_PKEY_get0_type_name(pk) : "non-RSA", fix);
    }
    ERR_clear_error();
    if (st != RD_OK) {
        EVP_PKEY_free(pk);
        return st;
    }
    *out = pk;
    return RD_OK;
}

/* Loads a PEM RSA private key file; every failure says what is wrong with it and what to do. */
static rd_status load_key(const char *path, EVP_PKEY **out, rd_error *err)
{
    char *text = NULL;
    size_t len = 0;
    rd_status st = read_key_file(path, KEY_FILE_MAX, &text, &len, err);
    if (st == RD_E_NOTFOUND)
        return st;
    if (st != RD_OK) { /* a FIFO, a folder, too large, unreadable: an unusable key */
        if (err)
            err->code = RD_E_AUTH;
        return RD_E_AUTH;
    }
    void *pk = NULL;
    st = adb_key_parse(text, len, path, &pk, err);
    if (st == RD_OK)
        *out = pk;
    OPENSSL_cleanse(text, len);
    free(text);
    return st;
}

static void add_key(adb_keys *k, EVP_PKEY *pk, const char *path, rd_adb_log_fn log, void *user)
{
    if (k->n < MAX_KEYS) {
        k->key[k->n++] = pk;
        return;
    }
    adb_logf(log, user, "ADB_VENDOR_KEYS: more than %d keys; %s not used", MAX_KEYS, path);
    EVP_PKEY_free(pk);
}

static void load_vendor_key(adb_keys *k, const char *path, rd_adb_log_fn log, void *user)
{
    EVP_PKEY *pk = NULL;
    rd_error e;
    if (load_key(path, &pk, &e) == RD_OK)
        add_key(k, pk, path, log, user);
    else
        adb_logf(log, user, "ADB_VENDOR_KEYS: skipping a key: %s", e.msg);
}

/* ADB_VENDOR_KEYS: ':'-separated files, or folders whose *.adb_key files are keys. */
static void load_vendor_keys(adb_keys *k, rd_adb_log_fn log, void *user)
{
    const char *env = getenv("ADB_VENDOR_KEYS");
    if (!env || !*env)
        return;
    char *copy = strdup(env);
    if (!copy)
        return;
    char *save = NULL;
    for (char *item = strtok_r(copy, ":", &save); item; item = strtok_r(NULL, ":", &save)) {
        struct stat st;
        if (stat(item, &st) != 0) {
            adb_logf(log, user, "ADB_VENDOR_KEYS: skipping %s: %s", item, strerror(errno));
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            load_vendor_key(k, item, log, user);
            continue;
        }
        DIR *d = opendir(item);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 8 && strcmp(e->d_name + l - 8, ".adb_key") == 0) {
                char p[4096];
                if ((size_t)snprintf(p, sizeof p, "%s/%s", item, e->d_name) < sizeof p)
                    load_vendor_key(k, p, log, user);
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
        st = rd_errorf(err, RD_E_UNSUPPORTED, "ADB needs a 2048-bit RSA key, this one has %d bits", BN_num_bits(n));
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
    if (st != RD_OK)
        return st;
    const char *user = getenv("USER");
    if (!user || !*user)
        user = getenv("LOGNAME");
    char host[256] = "unknown";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    size_t b64 = 4 * ((PUBKEY_ENCODED_SIZE + 2) / 3);
    size_t cap = b64 + 1 + 2 * 256 + 4;
    char *text = malloc(cap);
    if (!text)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    int w = EVP_EncodeBlock((unsigned char *)text, raw, PUBKEY_ENCODED_SIZE);
    snprintf(text + w, cap - (size_t)w, " %s@%s", user && *user ? user : "unknown", host);
    *out = text;
    return RD_OK;
}

rd_status adb_keys_public_text(const adb_keys *k, char **out, rd_error *err)
{
    if (!k || !k->has_user)
        return rd_errorf(err, RD_E_AUTH, "the board refused every key, and %s",
                         k && k->user_why[0] ? k->user_why : "no user key is loaded");
    return public_text(k->key[k->user], out, err);
}

/* Creates <dir>/adbkey (PKCS#8 PEM, 0600) and adbkey.pub, as adb does on first start, each written
 * whole or not at all (rd_atomic_file). adbkey.pub goes first: when it cannot be written, no key is
 * made and the next run starts clean; the key is then created exclusively, never over one another
 * program made meanwhile (that key is used, and adbkey.pub written again to match it). */
static rd_status create_user_key(const char *dir, const char *path, EVP_PKEY **out, rd_error *err)
{
    rd_status st = rd_dir_make(dir, 0, err);
    if (st != RD_OK)
        return rd_error_prefix(err, "creating the ADB key");
    EVP_PKEY *pk = EVP_RSA_gen(2048);
    if (!pk)
        return rd_errorf(err, RD_E_NOMEM, "cannot generate an RSA key");
    BIO *mem = BIO_new(BIO_s_mem());
    char *pem = NULL, *pub = NULL;
    long pem_len = 0;
    char pub_path[4200];
    snprintf(pub_path, sizeof pub_path, "%s.pub", path);
    const rd_write_options pub_opt = {.mode = 0644, .durable = true};
    const rd_write_options key_opt = {.mode = 0600, .durable = true, .exclusive = true};
    if (!mem || !PEM_write_bio_PrivateKey(mem, pk, NULL, NULL, 0, NULL, NULL) ||
        (pem_len = BIO_get_mem_data(mem, &pem)) <= 0) {
        st = rd_errorf(err, RD_E_NOMEM, "cannot encode the new key");
        goto out;
    }
    st = public_text(pk, &pub, err);
    if (st == RD_OK)
        st = rd_file_write_atomic(pub_path, pub, strlen(pub), &pub_opt, err);
    if (st != RD_OK) {
        rd_error_prefix(err, "creating the ADB key (nothing was kept; run again once this is fixed)");
        goto out;
    }
    st = rd_file_write_atomic(path, pem, (size_t)pem_len, &key_opt, err);
    if (st != RD_OK && access(path, F_OK) == 0) { /* made meanwhile by adb or rknn-diag: use it */
        EVP_PKEY_free(pk);
        pk = NULL;
        free(pub);
        pub = NULL;
        st = load_key(path, &pk, err);
        if (st == RD_OK)
            st = public_text(pk, &pub, err);
        if (st == RD_OK)
            st = rd_file_write_atomic(pub_path, pub, strlen(pub), &pub_opt, err);
    } else if (st != RD_OK) {
        rd_error_prefix(err, "creating the ADB key (no key was kept; run again once this is fixed)");
    }
out:
    free(pub);
    BIO_free(mem);
    if (st == RD_OK)
        *out = pk;
    else
        EVP_PKEY_free(pk);
    return st;
}

rd_status adb_user_key_path(const char *home, char *buf, size_t cap, rd_error *err)
{
    if (!home)
        home = getenv("HOME");
    char pwbuf[4096];
    struct passwd pw, *found = NULL;
    if ((!home || !*home) && getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &found) == 0 && found)
        home = found->pw_dir; /* as adb does when HOME is not set */
    if (!home || !*home)
        return rd_errorf(err, RD_E_AUTH,
                         "HOME is not set and this user has no home folder, so there is no "
                         "~/.android/adbkey to sign with: set HOME");
    if ((size_t)snprintf(buf, cap, "%s/.android/adbkey", home) >= cap)
        return rd_errorf(err, RD_E_LIMIT, "HOME is too long for a key path");
    return RD_OK;
}

/* The user key: loaded, or created when absent. */
static rd_status user_key(const char *path, EVP_PKEY **out, rd_error *err)
{
    rd_status st = load_key(path, out, err);
    if (st != RD_E_NOTFOUND)
        return st;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    return create_user_key(dir, path, out, err);
}

rd_status adb_keys_load(const char *home, rd_adb_log_fn log, void *user, adb_keys **out, rd_error *err)
{
    char path[4200];
    rd_error uerr;
    rd_status ust = adb_user_key_path(home, path, sizeof path, &uerr);
    adb_keys *k = calloc(1, sizeof *k);
    if (!k)
        return rd_errorf(err, RD_E_NOMEM, "out of memory");
    load_vendor_keys(k, log, user);
    EVP_PKEY *pk = NULL;
    if (ust == RD_OK)
        ust = user_key(path, &pk, &uerr);
    if (ust == RD_OK) {
        if (k->n == MAX_KEYS)
            EVP_PKEY_free(k->key[--k->n]);
        k->user = k->n;
        k->has_user = true;
        k->key[k->n++] = pk;
    } else if (k->n > 0) { /* the vendor keys may still do */
        adb_logf(log, user, "not signing with the user key: %s", uerr.msg);
        snprintf(k->user_why, sizeof k->user_why, "the user key is unusable: %s", uerr.msg);
    } else {
        adb_keys_free(k);
        if (err)
            *err = uerr;
        return ust;
    }
    *out = k;
    return RD_OK;
}

rd_status adb_user_public_key(const char *home, char **out, rd_error *err)
{
    char path[4200];
    rd_status st = adb_user_key_path(home, path, sizeof path, err);
    EVP_PKEY *pk = NULL;
    if (st == RD_OK)
        st = user_key(path, &pk, err);
    if (st == RD_OK)
        st = public_text(pk, out, err);
    EVP_PKEY_free(pk);
    return st;
}

rd_status adb_keys_sign(const adb_keys *k, size_t i, const uint8_t *token, size_t token_len, uint8_t *sig,
                        size_t *sig_len, rd_error *err)
{
    if (token_len != ADB_TOKEN_SIZE)
        return rd_errorf(err, RD_E_DEVICE, "the board sent an AUTH token of %zu bytes, expected %d", token_len,
                         ADB_TOKEN_SIZE);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(k->key[i], NULL);
    size_t len = 512;
    if (!ctx || EVP_PKEY_sign_init(ctx) <= 0 || EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) <= 0 ||
        EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha1()) <= 0 || EVP_PKEY_sign(ctx, sig, &len, token, token_len) <= 0) {
        EVP_PKEY_CTX_free(ctx);
        return rd_errorf(err, RD_E_AUTH, "signing the board's token with key %zu failed", i + 1);
    }
    EVP_PKEY_CTX_free(ctx);
    *sig_len = len;
    return RD_OK;
}

/* Decodes the base64 word of "<base64 RSAPublicKey>[ comment]"; false if it is not one. */
static bool pubkey_decode(const char *text, unsigned char raw[PUBKEY_ENCODED_SIZE + 4])
{
    size_t tl = strcspn(text, " \n\r\t");
    if (tl != 4 * ((PUBKEY_ENCODED_SIZE + 2) / 3))
        return false;
    unsigned char buf[4 * ((PUBKEY_ENCODED_SIZE + 2) / 3)];
    int rl = EVP_DecodeBlock(buf, (const unsigned char *)text, (int)tl);
    if (rl < PUBKEY_ENCODED_SIZE || adb_get_u32(buf) != PUBKEY_MODULUS_SIZE / 4)
        return false;
    memcpy(raw, buf, PUBKEY_ENCODED_SIZE);
    return true;
}

rd_status adb_pubkeys_parse(const char *text, size_t len, const char *name, rd_adb_log_fn log, void *user, char ***out,
                            size_t *n_out, rd_error *err)
{
    char **keys = NULL;
    size_t n = 0, line_no = 0;
    rd_status st = RD_OK;
    for (size_t pos = 0; pos < len && st == RD_OK;) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + 1;
        line_no++;
        size_t skip = 0;
        while (skip < ll && (line[skip] == ' ' || line[skip] == '\t' || line[skip] == '\r'))
            skip++;
        line += skip;
        ll -= skip;
        if (ll == 0 || line[0] == '#')
            continue;
        size_t word = 0;
        while (word < ll && line[word] != ' ' && line[word] != '\t' && line[word] != '\r' && line[word] != '\0')
            word++;
        char *k = strndup(line, word);
        unsigned char raw[PUBKEY_ENCODED_SIZE + 4];
        if (k && !pubkey_decode(k, raw)) {
            adb_logf(log, user, "%s: line %zu is not an ADB public key; skipped", name, line_no);
            free(k);
            continue;
        }
        char **nk = k ? realloc(keys, (n + 1) * sizeof *nk) : NULL;
        if (!nk) {
            free(k);
            st = rd_errorf(err, RD_E_NOMEM, "out of memory");
            break;
        }
        keys = nk;
        keys[n++] = k;
    }
    if (st == RD_OK && n == 0)
        st = rd_errorf(err, RD_E_INVAL,
                       "%s holds no ADB public key (expected lines like the one in "
                       "~/.android/adbkey.pub)",
                       name);
    if (st != RD_OK) {
        adb_pubkeys_free(keys, n);
        return st;
    }
    *out = keys;
    *n_out = n;
    return RD_OK;
}

rd_status adb_pubkeys_read(const char *path, rd_adb_log_fn log, void *user, char ***out, size_t *n_out, rd_error *err)
{
    char *text = NULL;
    size_t len = 0;
    rd_status st = read_key_file(path, PUBKEYS_FILE_MAX, &text, &len, err);
    if (st != RD_OK)
        return st;
    st = adb_pubkeys_parse(text, len, path, log, user, out, n_out, err);
    free(text);
    return st;
}

void adb_pubkeys_free(char **keys, size_t n)
{
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i]);
    free(keys);
}

bool adb_pubkey_verify(const char *pub_text, const uint8_t *token, size_t token_len, const uint8_t *sig, size_t sig_len)
{
    unsigned char raw[PUBKEY_ENCODED_SIZE + 4];
    if (!pubkey_decode(pub_text, raw))
        return false;
    BIGNUM *n = BN_lebin2bn(raw + 8, PUBKEY_MODULUS_SIZE, NULL);
    BIGNUM *e = BN_new();
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    EVP_PKEY_CTX *fctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
    EVP_PKEY *pk = NULL;
    EVP_PKEY_CTX *vctx = NULL;
    bool ok = false;
    if (!n || !e || !bld || !fctx || !BN_set_word(e, adb_get_u32(raw + 8 + 2 * PUBKEY_MODULUS_SIZE)))
        goto out;
    if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
        !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!params || EVP_PKEY_fromdata_init(fctx) <= 0 || EVP_PKEY_fromdata(fctx, &pk, EVP_PKEY_PUBLIC_KEY, params) <= 0)
        goto out;
    vctx = EVP_PKEY_CTX_new(pk, NULL);
    if (!vctx || EVP_PKEY_verify_init(vctx) <= 0 || EVP_PKEY_CTX_set_rsa_padding(vctx, RSA_PKCS1_PADDING) <= 0 ||
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
