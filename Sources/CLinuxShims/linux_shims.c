#define _GNU_SOURCE
#include <pthread.h>
#include <sys/eventfd.h>
#include "linux_shims.h"

int repd_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

int repd_set_thread_name(const char *name) { return pthread_setname_np(pthread_self(), name); }
