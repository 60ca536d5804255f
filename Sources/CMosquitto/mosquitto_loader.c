/* libmosquitto, opened at run time (see include/CMosquitto.h). The mosquitto_* definitions below are hidden: they
 * are not exported from repd, so libmosquitto's calls to its own functions never land here. */
#define _GNU_SOURCE
#pragma GCC visibility push(hidden)
#include <mosquitto.h>
#pragma GCC visibility pop
#include "CMosquitto.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The functions repd uses: X(name) for each. */
#define REPD_MOSQUITTO_FUNCTIONS(X) \
    X(mosquitto_lib_init) X(mosquitto_new) X(mosquitto_destroy) X(mosquitto_user_data_set) \
    X(mosquitto_username_pw_set) X(mosquitto_will_set) X(mosquitto_tls_set) X(mosquitto_tls_insecure_set) \
    X(mosquitto_max_inflight_messages_set) X(mosquitto_connect_async) X(mosquitto_disconnect) X(mosquitto_publish) \
    X(mosquitto_socket) X(mosquitto_loop_read) X(mosquitto_loop_write) X(mosquitto_loop_misc) \
    X(mosquitto_want_write) X(mosquitto_connect_v5_callback_set) X(mosquitto_disconnect_v5_callback_set) \
    X(mosquitto_publish_v5_callback_set) X(mosquitto_log_callback_set) X(mosquitto_strerror) \
    X(mosquitto_connack_string) X(mosquitto_reason_string) X(mosquitto_int_option)

#define REPD_POINTER(name) static __typeof__(name) *p_##name;
REPD_MOSQUITTO_FUNCTIONS(REPD_POINTER)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded = false;

/* Under `lock`: drops every pointer found so far (a library that lacked one is closed again). */
static void forget(void) {
#define REPD_FORGET(name) p_##name = NULL;
    REPD_MOSQUITTO_FUNCTIONS(REPD_FORGET)
}

/* Under `lock`: opens the library and finds every function, or says why not (then nothing is kept, and a later
 * call tries again: the library may have been installed since). */
static int load(char *error, size_t size) {
    /* RTLD_LOCAL: its symbols (and OpenSSL's) stay out of the global scope. */
    void *library = dlopen("libmosquitto.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(error, size, "%s (Debian/Ubuntu: apt install libmosquitto1)", dlerror());
        return -1;
    }
#define REPD_LOOKUP(name) \
    if ((p_##name = (__typeof__(name) *)dlsym(library, #name)) == NULL) { \
        snprintf(error, size, "libmosquitto.so.1 has no %s", #name); \
        forget(); \
        dlclose(library); \
        return -1; \
    }
    REPD_MOSQUITTO_FUNCTIONS(REPD_LOOKUP)
    return 0;
}

int repd_mosquitto_load(char *error, size_t size) {
    char reason[256] = "";
    pthread_mutex_lock(&lock);
    if (!loaded) loaded = load(reason, sizeof reason) == 0;
    int result = loaded ? 0 : -1;
    pthread_mutex_unlock(&lock);
    if (result != 0 && error != NULL && size > 0) snprintf(error, size, "%s", reason);
    return result;
}

/* The forwarders: each calls the loaded function (repd calls them only after repd_mosquitto_load succeeded). */
int mosquitto_lib_init(void) { return p_mosquitto_lib_init(); }
struct mosquitto *mosquitto_new(const char *id, bool clean_session, void *obj) {
    return p_mosquitto_new(id, clean_session, obj);
}
void mosquitto_destroy(struct mosquitto *mosq) { p_mosquitto_destroy(mosq); }
void mosquitto_user_data_set(struct mosquitto *mosq, void *obj) { p_mosquitto_user_data_set(mosq, obj); }
int mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    return p_mosquitto_username_pw_set(mosq, username, password);
}
int mosquitto_will_set(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload, int qos,
                       bool retain) {
    return p_mosquitto_will_set(mosq, topic, payloadlen, payload, qos, retain);
}
int mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                      const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    return p_mosquitto_tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback);
}
int mosquitto_tls_insecure_set(struct mosquitto *mosq, bool value) { return p_mosquitto_tls_insecure_set(mosq, value); }
int mosquitto_max_inflight_messages_set(struct mosquitto *mosq, unsigned int max_inflight_messages) {
    return p_mosquitto_max_inflight_messages_set(mosq, max_inflight_messages);
}
int mosquitto_connect_async(struct mosquitto *mosq, const char *host, int port, int keepalive) {
    return p_mosquitto_connect_async(mosq, host, port, keepalive);
}
int mosquitto_disconnect(struct mosquitto *mosq) { return p_mosquitto_disconnect(mosq); }
int mosquitto_publish(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen, const void *payload,
                      int qos, bool retain) {
    return p_mosquitto_publish(mosq, mid, topic, payloadlen, payload, qos, retain);
}
int mosquitto_socket(struct mosquitto *mosq) { return p_mosquitto_socket(mosq); }
int mosquitto_loop_read(struct mosquitto *mosq, int max_packets) { return p_mosquitto_loop_read(mosq, max_packets); }
int mosquitto_loop_write(struct mosquitto *mosq, int max_packets) { return p_mosquitto_loop_write(mosq, max_packets); }
int mosquitto_loop_misc(struct mosquitto *mosq) { return p_mosquitto_loop_misc(mosq); }
bool mosquitto_want_write(struct mosquitto *mosq) { return p_mosquitto_want_write(mosq); }
void mosquitto_connect_v5_callback_set(struct mosquitto *mosq,
                                       void (*on_connect)(struct mosquitto *, void *, int, int,
                                                          const mosquitto_property *)) {
    p_mosquitto_connect_v5_callback_set(mosq, on_connect);
}
void mosquitto_disconnect_v5_callback_set(struct mosquitto *mosq,
                                          void (*on_disconnect)(struct mosquitto *, void *, int,
                                                                const mosquitto_property *)) {
    p_mosquitto_disconnect_v5_callback_set(mosq, on_disconnect);
}
void mosquitto_publish_v5_callback_set(struct mosquitto *mosq,
                                       void (*on_publish)(struct mosquitto *, void *, int, int,
                                                          const mosquitto_property *)) {
    p_mosquitto_publish_v5_callback_set(mosq, on_publish);
}
int mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) {
    return p_mosquitto_int_option(mosq, option, value);
}
void mosquitto_log_callback_set(struct mosquitto *mosq,
                                void (*on_log)(struct mosquitto *, void *, int, const char *)) {
    p_mosquitto_log_callback_set(mosq, on_log);
}
const char *mosquitto_strerror(int mosq_errno) {
    return p_mosquitto_strerror != NULL ? p_mosquitto_strerror(mosq_errno) : "libmosquitto is not loaded";
}
const char *mosquitto_connack_string(int connack_code) {
    return p_mosquitto_connack_string != NULL ? p_mosquitto_connack_string(connack_code) : "libmosquitto is not loaded";
}
const char *mosquitto_reason_string(int reason_code) {
    return p_mosquitto_reason_string != NULL ? p_mosquitto_reason_string(reason_code) : "libmosquitto is not loaded";
}
