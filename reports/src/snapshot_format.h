/*
 * snapshot_format.h: one float32 as the snapshot text files print it (docs/formats.md): "%.6g" when it
 * reads back to the same float32 through strtof, else "%.8g", else "%.9g"; "nan", "inf", "-inf".
 * Internal to the reports library (tests include it by path).
 */
#ifndef RD_REP_SNAPSHOT_FORMAT_H
#define RD_REP_SNAPSHOT_FORMAT_H

/** Longest text rep_snapshot_format_f32 writes, without a terminator ("-1.17549435e-38" is 15). */
#define REP_SNAPSHOT_VALUE_MAX 24

/**
 * Writes x into buf (at least REP_SNAPSHOT_VALUE_MAX bytes, not NUL-terminated, possibly written past the
 * length returned) and returns the length.
 * Byte for byte what snprintf's "%.6g"/"%.8g"/"%.9g" and the strtof round-trip checks produce, without
 * calling them for all but about one value in 10^4 (a decimal tie or a value at the edge of the float's
 * rounding interval, which fall back to them). Thread-safe, no state.
 */
int rep_snapshot_format_f32(float x, char *buf);

#endif
