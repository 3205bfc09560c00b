// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_engine_opts.c - the job options of the fio engine "ibtrs" as the
 * engine turns them into parameters: fio_ibtrs_clt_params(),
 * fio_ibtrs_access_mode() and fio_ibtrs_make_sessname() of
 * fio-engine/ibtrs_opts.c (compiled against fio's own headers), then the
 * split of the paths option (ibnbd_clt_create() of fio-engine/ibnbd_clt.c)
 * and each path's address (trs_clt_path_alloc() of trs/lib/clt_path.c),
 * the same chain a job goes through before it connects.
 *
 * Input: a flags byte (bits 0-2: the job's data direction as fio's
 * TD_DDIR_READ/WRITE/TRIM bits), port (2 bytes), connections per path (1),
 * queue depth (2), ctrl_loss_tmo (4, signed), heartbeat interval (2),
 * connect timeout (2), the session name buffer's size (1 byte; exactly
 * that big), then NUL-separated strings: paths, devpath, the job's
 * filename, access_mode, sessname, mp_policy, mr_mode, inval_mode; a
 * string the input does not reach is an option not set (NULL, as fio
 * leaves it). Checks: 0 or -EINVAL (with the job's error set); accepted
 * parameters point at the options given, name a device, carry known enum
 * values and the timeout as documented; the access mode is known and
 * "auto" follows the job's direction; the session name is terminated
 * within its buffer, and when the options were accepted and the buffer is
 * the engine's, the server would accept it (trs_info_req_decode()); the
 * paths split into 1..IBTRS_MAX_PATHS non-empty pieces of the option,
 * each parsed to an IPv4/IPv6 destination with the job's port.
 */
#include "ibtrs_engine.h"

#include "fuzz.h"
#include "engine_fuzz.h"
#include "trs_common.h"

ssize_t log_err(const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = fz_format(format, ap);
	va_end(ap);
	return n;
}

static void check_params(struct thread_data *td,
			 const struct fio_ibtrs_options *o,
			 const struct ibnbd_clt_params *p, const char *sessname)
{
	const struct ibtrs_clt_opts *co = &p->trs;

	FZ_CHECK(!td->error);
	FZ_CHECK(p->paths == o->paths && *p->paths);
	FZ_CHECK(p->devpath && *p->devpath);
	FZ_CHECK(p->devpath == o->devpath || p->devpath == td->o.filename);
	FZ_CHECK(p->sessname == sessname);
	FZ_CHECK(p->queue_depth == o->queue_depth);
	FZ_CHECK(co->port == o->port);
	FZ_CHECK((unsigned int)co->policy <= IBTRS_MP_MIN_LATENCY);
	FZ_CHECK(co->mr_mode <= IBTRS_MR_BOUNCE);
	FZ_CHECK(co->inval_mode <= IBTRS_INVAL_NONE);
	FZ_CHECK(o->ctrl_loss_tmo <= INT_MAX / 1000);
	if (o->ctrl_loss_tmo < 0)
		FZ_CHECK(co->ctrl_loss_tmo_ms == -1);
	else if (!o->ctrl_loss_tmo)
		FZ_CHECK(co->ctrl_loss_tmo_ms == 1);
	else
		FZ_CHECK((long long)co->ctrl_loss_tmo_ms ==
			 (long long)o->ctrl_loss_tmo * 1000);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct thread_data *td;
	struct fio_ibtrs_options o;
	struct ibnbd_clt_params p;
	enum ibnbd_access_mode mode;
	struct trs_msg_info_req m;
	char *s[8], *filename, *sess;
	char name[TRS_SESSNAME_MAX], back[TRS_SESSNAME_MAX];
	struct fz_in in;
	size_t sesslen;
	__u8 flags;
	int ret, i;

	if (!td)
		td = fz_alloc(sizeof(*td));
	memset(td, 0, sizeof(*td));
	memset(&o, 0, sizeof(o));
	fz_in_init(&in, data, size);
	flags = fz_u8(&in);
	td->o.td_ddir = flags & (TD_DDIR_READ | TD_DDIR_WRITE | TD_DDIR_TRIM);
	td->thread_number = 1;
	o.port = fz_u16(&in);
	o.cons_per_path = fz_u8(&in);
	o.queue_depth = fz_u16(&in);
	o.ctrl_loss_tmo = (int)fz_u32(&in);
	o.hb_interval_ms = fz_u16(&in);
	o.connect_timeout_ms = fz_u16(&in);
	sesslen = fz_u8(&in);
	for (i = 0; i < 8; i++)
		s[i] = fz_field(&in);
	o.paths = s[0];
	o.devpath = s[1];
	filename = s[2];
	td->o.filename = filename;
	o.access_mode = s[3];
	o.sessname = s[4];
	o.mp_policy = s[5];
	o.mr_mode = s[6];
	o.inval_mode = s[7];
	td->eo = &o;

	sess = fz_alloc(sesslen);
	fio_ibtrs_make_sessname(td, sess, sesslen);
	if (sesslen)
		FZ_CHECK(strnlen(sess, sesslen) < sesslen);
	fio_ibtrs_make_sessname(td, name, sizeof(name));
	FZ_CHECK(strnlen(name, sizeof(name)) < sizeof(name));

	ret = fio_ibtrs_access_mode(td, &mode);
	FZ_CHECK(ret == 0 || ret == -EINVAL);
	if (!ret) {
		FZ_CHECK(mode <= IBNBD_ACCESS_MIGRATION);
		if (!o.access_mode || !strcmp(o.access_mode, "auto"))
			FZ_CHECK(mode == ((td_write(td) || td_trim(td)) ?
					  IBNBD_ACCESS_RW : IBNBD_ACCESS_RO));
	} else {
		FZ_CHECK(td->error == EINVAL);
	}

	td->error = 0;
	ret = fio_ibtrs_clt_params(td, &p, name);
	FZ_CHECK(ret == 0 || ret == -EINVAL);
	if (ret) {
		FZ_CHECK(td->error == EINVAL);
		goto out;
	}
	check_params(td, &o, &p, name);
	/* the name the engine would send: the server must accept it */
	trs_info_req_encode(&m, name);
	FZ_CHECK(trs_info_req_decode(&m, sizeof(m), back, NULL) == 0);
	fz_engine_paths(&p);
out:
	free(sess);
	for (i = 0; i < 8; i++)
		free(s[i]);
	return 0;
}
