#ifndef REPD_BENCH_DECODER_H
#define REPD_BENCH_DECODER_H
#include <stddef.h>
#include <stdint.h>

/// One decoded sample: seconds and g, as MotionSample.
typedef struct {
    double t, ax, ay, az;
} bench_sample;

/// The baseline for repd-bench's decode figure: a hand-written C decoder of one fixed layout (x, y, z as le:s16/16>>0
/// at 0, 2, 4; 2 pad bytes; le:s64 ns timestamp at 8; 16-byte records), scaled to g. Returns the records decoded.
size_t bench_decode_xyz_ts(const uint8_t *records, size_t count, double scale_g, bench_sample *out);

#endif
