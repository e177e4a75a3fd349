/* snapshot_compare.h: whether two snapshot folders hold the same files, byte for byte (test helper). */
#ifndef RD_TEST_SNAPSHOT_COMPARE_H
#define RD_TEST_SNAPSHOT_COMPARE_H

#include <stddef.h>

/**
 * Compares a/sub and b/sub for each sub of subs (NULL-terminated; "" for the folder itself): the same
 * regular file names with the same bytes, and no *.tmp left behind. Returns the number of files compared,
 * or -1 after printing the first difference to stderr.
 */
long rd_test_snapshots_compare(const char *a, const char *b, const char *const *subs);

#endif
