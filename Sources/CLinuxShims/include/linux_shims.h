#ifndef REPD_LINUX_SHIMS_H
#define REPD_LINUX_SHIMS_H
/* Linux calls the Swift Glibc module does not export. */

/// eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK): a counter that wakes poll() (used to stop reader threads).
int repd_eventfd(void);

/// pthread_setname_np on the calling thread (names show in top -H and /proc/PID/task/TID/comm).
int repd_set_thread_name(const char *name);

#endif
