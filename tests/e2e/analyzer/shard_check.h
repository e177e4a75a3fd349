/* shard_check.h: `accuracy --shard` runs and their merge compared with a one-process run (tests only). */
#ifndef RD_TEST_SHARD_CHECK_H
#define RD_TEST_SHARD_CHECK_H

/**
 * Runs `accuracy ARGS -o BASE/one`, then `accuracy ARGS --shard k/n -o BASE/s<n>/<k>` for
 * every k and `merge` of them into BASE/m<n>, and asserts that every file of the snapshot (error_analysis.txt,
 * report.json, report.html, map_name_to_file.txt, golden/ and simulator/) is the same bytes, and the exit
 * codes the same.
 */
void rd_check_accuracy_shards(const char *base, int n_args, const char *const *args, int n);

#endif
