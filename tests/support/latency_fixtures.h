/*
 * latency_fixtures.h: board per-layer tables (RKNN_LOG_LEVEL=4) written the way the runtime prints them,
 * in the layouts seen in public logs (docs/hybrid.md): the RKNN 2.x "Network Layer Information Table"
 * (Cycles(DDR/NPU/Total), log prefix "D RKNN: [hh:mm:ss.mmm] ") and the older one (DDR Cycles / NPU Cycles
 * / Total Cycles columns, WorkLoad cells with spaces, no prefix). Columns are left-aligned at fixed widths.
 */
#ifndef RD_TEST_LATENCY_FIXTURES_H
#define RD_TEST_LATENCY_FIXTURES_H

#include <stdio.h>

/* One layer of a fixture: what varies between rows. */
typedef struct lat_fx_row {
    const char *op, *dtype, *target, *in_shape, *out_shape;
    double us;
    const char *full_name;
} lat_fx_row;

#define LAT_FX_PREFIX "D RKNN: [05:07:06.566] "

/* RKNN 2.x layout with the log prefix, title, rules and the summary after the table. */
static inline void lat_fx_write_v2(FILE *f, const lat_fx_row *rows, int n)
{
    const char *rule = "-----------------------------------------------------------------------------------------------"
                       "------------------------------------------------------------------------------";
    fprintf(f, "I RKNN: [05:07:06.100] RKNN Runtime Information, librknnrt version: 2.3.0\n");
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
    fprintf(f, LAT_FX_PREFIX "%70s\n", "Network Layer Information Table");
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
    fprintf(f, LAT_FX_PREFIX "%-5s%-19s%-9s%-7s%-41s%-23s%-25s%-13s%-21s%-21s%-13s%-16s\n", "ID", "OpType", "DataType",
            "Target", "InputShape", "OutputShape", "Cycles(DDR/NPU/Total)", "Time(us)", "MacUsage(%)",
            "WorkLoad(0/1/2)", "RW(KB)", "FullName");
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
    for (int i = 0; i < n; i++) {
        const lat_fx_row *r = &rows[i];
        bool cpu = r->target[0] == 'C';
        char time[32];
        snprintf(time, sizeof time, "%.0f", r->us);
        fprintf(f, LAT_FX_PREFIX "%-5d%-19s%-9s%-7s%-41s%-23s%-25s%-13s%-21s%-21s%-13s%s\n", i + 1, r->op, r->dtype,
                r->target, r->in_shape, r->out_shape, cpu ? "0/0/0" : "25136/57600/57600", time, cpu ? "" : "\\",
                cpu ? "0.0%/0.0%/0.0%" : "100.0%/0.0%/0.0%", "150", r->full_name);
    }
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
    fprintf(f, LAT_FX_PREFIX "Total Operator Elapsed Per Frame Time(us): 1234\n");
    fprintf(f, LAT_FX_PREFIX "Total Memory Read/Write Per Frame Size(KB): 5678.00\n");
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
    fprintf(f, LAT_FX_PREFIX "%60s\n", "Operator Time Consuming Ranking Table");
    fprintf(f, LAT_FX_PREFIX "%-19s%-13s%-13s%-13s%-13s%-15s%-14s\n", "OpType", "CallNumber", "CPUTime(us)",
            "GPUTime(us)", "NPUTime(us)", "TotalTime(us)", "TimeRatio(%)");
    fprintf(f, LAT_FX_PREFIX "%-19s%-13s%-13s%-13s%-13s%-15s%-14s\n", "ConvRelu", "2", "0", "0", "300", "300", "80.0%");
    fprintf(f, LAT_FX_PREFIX "%s\n", rule);
}

/* Older layout (toolkit eval_perf style): "====" rules, three Cycles columns, WorkLoad cells with spaces. */
static inline void lat_fx_write_old(FILE *f, const lat_fx_row *rows, int n)
{
    const char *rule =
        "==================================================================================================";
    fprintf(f, "%s\n%45s\n", rule, "Performance");
    fprintf(f, "        #### The performance result is just for debugging, ####\n%s\n", rule);
    fprintf(f, "%-5s%-17s%-9s%-7s%-45s%-23s%-15s%-15s%-15s%-15s%-15s%-39s%-15s%-15s%-15s%s\n", "ID", "OpType",
            "DataType", "Target", "InputShape", "OutputShape", "DDR Cycles", "NPU Cycles", "Total Cycles", "Time(us)",
            "MacUsage(%)", "WorkLoad(0/1/2)-ImproveTherical", "Task Number", "Lut Number", "RW(KB)", "FullName");
    for (int i = 0; i < n; i++) {
        const lat_fx_row *r = &rows[i];
        char time[32];
        snprintf(time, sizeof time, "%.0f", r->us);
        fprintf(f, "%-5d%-17s%-9s%-7s%-45s%-23s%-15s%-15s%-15s%-15s%-15s%-39s%-15s%-15s%-15s%s\n", i + 1, r->op,
                r->dtype, r->target, r->in_shape, r->out_shape, "94150", "10584", "94150", time, "2.47",
                "0.0%/0.0%/0.0% - Up:0.0%", "0", "0", "147.00", r->full_name);
    }
    fprintf(f, "%s\nTotal Time(us): 2345\nFPS: 426.44\n%s\n", rule, rule);
}

#endif
