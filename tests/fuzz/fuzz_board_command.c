/*
 * fuzz_board_command.c: the fake board's rewriting of shell commands (adb_bridge/src/
 * board_paths.c), which parses quotes and words of text a host sends. The input is the command
 * (NUL bytes end it, as they end a service name); the root has a space and a quote, the hardest
 * case for the quoting it inserts. Oracle: the rewriting only inserts, so the command is a
 * subsequence of the result.
 *
 * Build needs (for tests/fuzz/tests.cmake): rd_adb_internal (board_internal.h).
 */
#include "board_internal.h"
#include "fuzz_input.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_INPUT 8192u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *cmd = fuzz_copy_str(data, size, FUZZ_MAX_INPUT);
    if (!cmd)
        return 0;
    char *out = board_map_command("/nonexistent-rd-fuzz/board root's", cmd);
    if (out) {
        const char *o = out;
        for (const char *c = cmd; *c; c++) {
            o = strchr(o, *c);
            if (!o)
                abort(); /* a byte of the command was lost */
            o++;
        }
        free(out);
    }
    free(cmd);
    return 0;
}
