/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ibtrs_engine.h - what the fio glue (ibtrs_engine.c) and the option table
 * (ibtrs_opts.c) of the fio ioengine "ibtrs" share. Includes fio's headers:
 * not for ibnbd_clt.c, which knows nothing of fio.
 */
#ifndef FIO_IBTRS_ENGINE_H
#define FIO_IBTRS_ENGINE_H

#include "fio.h"
#include "optgroup.h"

/*
 * fio's os.h defines cpu_to_le16() & co.; proto_compat.h (through the IBNBD
 * wire header) defines those names only when they are not defined already
 * (its own are trs_cpu_to_le16() & co.), so both can be included.
 */
#include "ibnbd_clt.h"

struct fio_ibtrs_options {
	void *pad;	/* an option's off1 must not be 0 */
	char *paths;
	unsigned int port;
	char *devpath;
	char *access_mode;
	char *sessname;
	char *mp_policy;
	unsigned int cons_per_path;
	unsigned int queue_depth;
	int ctrl_loss_tmo;
	char *mr_mode;
	char *inval_mode;
	char *write_mode;
	unsigned int busy_poll;
	unsigned int poll_yield;
	unsigned int coalesce;
	unsigned int hb_interval_ms;
	unsigned int connect_timeout_ms;
	unsigned int fua;
	char *ios_file;
};

/* ibtrs_opts.c */
extern struct fio_option fio_ibtrs_options[];
int fio_ibtrs_clt_params(struct thread_data *td, struct ibnbd_clt_params *p,
			 const char *sessname);
int fio_ibtrs_access_mode(struct thread_data *td, enum ibnbd_access_mode *mode);
void fio_ibtrs_make_sessname(struct thread_data *td, char *buf, size_t len);

#endif /* FIO_IBTRS_ENGINE_H */
