// The build's version, set from outside: `swift build -Xcc -DREPD_BUILD_VERSION='"0.1.0~git20261205.abc1234"'`
// (the Makefile's VERSION). Plain C, so that the pure core can read it on any platform.
#include "build_version.h"

#ifndef REPD_BUILD_VERSION
#define REPD_BUILD_VERSION ""
#endif

const char *repd_build_version(void) { return REPD_BUILD_VERSION; }
