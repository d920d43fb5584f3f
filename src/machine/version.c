// SPDX-License-Identifier: MIT
/*
 * version.c - which pagelab this is: the release version and the git commit
 * the library was configured from (CMake writes both into pagelab_version.h
 * at configure time; "-dirty" when tracked files had changes, "unknown"
 * outside a git checkout). pagelab-bench --version and the Python API print
 * them, so a result can always be traced to its source.
 */
#include "pagelab/pagelab.h"
#include "pagelab_version.h"

const char *pl_version(void)
{
	return PAGELAB_BUILD_VERSION;
}

const char *pl_git_commit(void)
{
	return PAGELAB_BUILD_COMMIT;
}
