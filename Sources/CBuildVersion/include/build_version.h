#ifndef REPD_BUILD_VERSION_H
#define REPD_BUILD_VERSION_H

/// The version the build was given (`make VERSION=…`, which scripts/package sets to the package's version: the C
/// flag -DREPD_BUILD_VERSION="…"), or "" for a build without one (a plain `swift build`).
const char *repd_build_version(void);

#endif
