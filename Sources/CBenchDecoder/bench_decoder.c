#include <string.h>
#include "bench_decoder.h"

size_t bench_decode_xyz_ts(const uint8_t *records, size_t count, double scale_g, bench_sample *out) {
    for (size_t i = 0; i < count; i++) {
        const uint8_t *r = records + i * 16;
        int16_t x, y, z;
        int64_t ns;
        memcpy(&x, r, 2);  /* little-endian host: no swap */
        memcpy(&y, r + 2, 2);
        memcpy(&z, r + 4, 2);
        memcpy(&ns, r + 8, 8);
        out[i].t = (double)ns / 1e9;
        out[i].ax = x * scale_g;
        out[i].ay = y * scale_g;
        out[i].az = z * scale_g;
    }
    return count;
}
