/* main.c: the rknn-diag program; everything lives in the analyzer library. */
#include "rknn_diag/analyzer.h"

int main(int argc, char **argv)
{
    return rd_cli_main(argc, argv);
}
