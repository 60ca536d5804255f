#ifndef REPD_CMOSQUITTO_SHIM_H
#define REPD_CMOSQUITTO_SHIM_H
/* The system's MQTT client library (libmosquitto, Debian libmosquitto-dev), for repd's fleet uplink. */
#include <mosquitto.h>
#endif
