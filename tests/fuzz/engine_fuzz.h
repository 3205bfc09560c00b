/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine_fuzz.h - the three translation units of the fio engine's option
 * harness: fuzz_engine_opts.c (fio's headers, ibtrs_opts.c's functions),
 * engine_paths.c (fio-engine/ibnbd_clt.c, which splits the paths option)
 * and engine_lib.c (libibtrs's parser of one path address). They cannot
 * share one unit: fio's headers, ibnbd_clt.c's internals and the
 * library's private header each define names the others do too.
 */
#ifndef ENGINE_FUZZ_H
#define ENGINE_FUZZ_H

#include <stdint.h>

struct ibnbd_clt_params;

/*
 * engine_paths.c: ibnbd_clt_create() on @p; for each path its split
 * produced, fz_lib_path(). Returns the number of paths, or the negative
 * errno of ibnbd_clt_create().
 */
int fz_engine_paths(const struct ibnbd_clt_params *p);

/* engine_lib.c: trs_clt_path_alloc() on @addr with @port, checked. */
void fz_lib_path(const char *addr, uint16_t port);

#endif /* ENGINE_FUZZ_H */
