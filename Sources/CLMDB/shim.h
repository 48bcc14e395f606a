#ifndef PERMISSION_LEDGER_CLMDB_SHIM_H
#define PERMISSION_LEDGER_CLMDB_SHIM_H
#include <lmdb.h>
#if defined(__linux__)
/* statfs, to refuse file systems LMDB cannot use (network and pseudo file systems). */
#include <sys/vfs.h>
#elif defined(__APPLE__)
#include <sys/param.h>
#include <sys/mount.h>
#endif
#endif
