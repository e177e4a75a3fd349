/* content_hash.c: content_hash.h over OpenSSL's EVP interface. */
#include "content_hash.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

rd_status an_hash_init(an_hash *h, rd_error *err)
{
    h->md = EVP_MD_CTX_new();
    if (!h->md || !EVP_DigestInit_ex(h->md, EVP_sha256(), NULL))
        return rd_errorf(err, RD_E_NOMEM, "out of memory (hash)");
    return RD_OK;
}

void an_hash_bytes(an_hash *h, const void *p, size_t n)
{
    uint64_t len = n;
    EVP_DigestUpdate(h->md, &len, sizeof len);
    EVP_DigestUpdate(h->md, p, n);
}

void an_hash_str(an_hash *h, const char *s)
{
    an_hash_bytes(h, s ? s : "", s ? strlen(s) : 0);
}

rd_status an_hash_file(an_hash *h, const char *path, rd_error *err)
{
    int fd = -1;
    uint64_t size = 0;
    rd_status st = rd_file_open_read(path, 0, UINT64_MAX, &fd, &size, err);
    if (st != RD_OK)
        return st;
    EVP_DigestUpdate(h->md, &size, sizeof size);
    static const size_t block = (size_t)1 << 16;
    char *buf = malloc(block);
    if (!buf)
        st = rd_errorf(err, RD_E_NOMEM, "out of memory (hashing %s)", path);
    for (ssize_t r = 1; st == RD_OK && r > 0;) {
        r = read(fd, buf, block);
        if (r < 0)
            st = rd_errorf(err, RD_E_IO, "%s: cannot read it to hash it", path);
        else
            EVP_DigestUpdate(h->md, buf, (size_t)r);
    }
    free(buf);
    close(fd);
    return st;
}

void an_hash_hex(an_hash *h, char *hex)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(h->md, md, &n);
    for (unsigned i = 0; i < n && i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

void an_hash_fini(an_hash *h)
{
    EVP_MD_CTX_free(h->md);
    h->md = NULL;
}
