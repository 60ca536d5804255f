#ifndef REPD_CUDEV_SHIM_H
#define REPD_CUDEV_SHIM_H
/* libudev, the real one: repd never re-implements device discovery. */
#include <libudev.h>
#endif
