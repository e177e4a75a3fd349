/*
 * content_hash.h: the SHA-256 (OpenSSL's libcrypto) that tells one run's inputs apart from any other's, fed
 * with length-prefixed items ("ab"+"c" and "a"+"bc" differ) and files (size, then bytes): the run and shard
 * hashes of `accuracy --shard` and `eval --shard` (docs/sharding.md).
 */
#ifndef RD_AN_CONTENT_HASH_H
#define RD_AN_CONTENT_HASH_H

#include "rknn_diag/simulator.h"

/* A hash as text: 64 lowercase hex digits and the terminating NUL. */
#define AN_HASH_HEX (2 * 32 + 1)

typedef struct an_hash {
    struct evp_md_ctx_st *md; /* EVP_MD_CTX */
} an_hash;

/** Starts a SHA-256. RD_E_NOMEM when libcrypto cannot make one (h is then safe to an_hash_fini). */
rd_status an_hash_init(an_hash *h, rd_error *err);

/** Feeds n bytes, preceded by n. */
void an_hash_bytes(an_hash *h, const void *p, size_t n);

/** Feeds a string as an_hash_bytes does (NULL as ""). */
void an_hash_str(an_hash *h, const char *s);

/** Feeds the file's size then its bytes, read in blocks (models and images can be large). */
rd_status an_hash_file(an_hash *h, const char *path, rd_error *err);

/** Ends the hash and writes it as AN_HASH_HEX text into hex. */
void an_hash_hex(an_hash *h, char *hex);

/** Releases the hash (after an_hash_hex or instead of it). */
void an_hash_fini(an_hash *h);

#endif
