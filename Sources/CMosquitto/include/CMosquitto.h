#ifndef REPD_CMOSQUITTO_H
#define REPD_CMOSQUITTO_H
/* The system's MQTT client library (libmosquitto, Debian libmosquitto-dev for the header, libmosquitto1 at run
 * time), for repd's fleet uplink. repd does not link it: repd_mosquitto_load() opens libmosquitto.so.1 the first
 * time the uplink starts, so a daemon whose uplink is off never maps it, nor the OpenSSL it brings (about 1.7 MiB
 * resident and 0.45 MiB of private dirty memory, measured). The mosquitto_* functions repd calls are defined in
 * mosquitto_loader.c and forward to the loaded library; call them only after repd_mosquitto_load succeeded. */
#include <mosquitto.h>
#include <stddef.h>

/* Opens libmosquitto.so.1 and finds the functions repd uses (thread-safe; once it succeeded, later calls return at
 * once; after a failure the next call tries again). Returns 0 on success; otherwise -1, with the reason (dlopen's or
 * dlsym's message) in `error`. */
int repd_mosquitto_load(char *error, size_t size);

#endif
