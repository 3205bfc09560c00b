// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mem.c - client memory: user regions and the bounce/header buffer
 * registered on every path's PD, and the per-IO remote key of a read
 * buffer, or of a pulled write's buffer (type-2 memory window, per-IO MR
 * fallback, or the unsafe global key).
 */
#include <stdlib.h>
#include <string.h>

#include "clt.h"

/* Remote access to client memory only ever goes through a per-IO key,
 * except in the unsafe modes asked for by name. */
static bool trs_clt_global_keys(const struct ibtrs_clt *clt)
{
	return clt->opts.mr_mode == IBTRS_MR_GLOBAL ||
	       clt->opts.inval_mode == IBTRS_INVAL_NONE;
}

/* Windows are bound per read (mw; bounce unless keys are long-lived). */
static bool trs_clt_wants_mw(const struct ibtrs_clt *clt)
{
	return !trs_clt_global_keys(clt) && clt->opts.mr_mode != IBTRS_MR_REG;
}

/*
 * @exposed: the memory reads land in (a user region, or the bounce
 * buffer). In mr_mode bounce, user regions are never exposed, not even
 * with the unsafe long-lived key of inval_mode none.
 */
static struct ibv_mr *trs_clt_reg(struct trs_clt_path *path, void *addr,
				  size_t len, bool exposed)
{
	struct ibtrs_clt *clt = path->clt;
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct ibv_mr *mr;

	if (exposed || clt->opts.mr_mode != IBTRS_MR_BOUNCE) {
		if (trs_clt_global_keys(clt))
			access |= IBV_ACCESS_REMOTE_WRITE |
				  (clt->opts.write_mode == IBTRS_WRITE_PULL ?
				   IBV_ACCESS_REMOTE_READ : 0);
		else if (trs_clt_wants_mw(clt) && path->dev->mw_state >= 0)
			access |= IBV_ACCESS_MW_BIND;
	}
	mr = ibv_reg_mr(path->dev->pd, addr, len, access);
	if (!mr && (access & IBV_ACCESS_MW_BIND)) {
		path->dev->mw_state = -1;
		mr = ibv_reg_mr(path->dev->pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	}
	return mr;
}

static void trs_clt_free_mws(struct trs_clt_path *path, unsigned int n)
{
	while (n-- > 0)
		ibv_dealloc_mw(path->mw[n]);
	free(path->mw);
	free(path->mw_rkey);
	path->mw = NULL;
	path->mw_rkey = NULL;
}

static int trs_clt_alloc_mws(struct trs_clt_path *path)
{
	struct ibtrs_clt *clt = path->clt;
	unsigned int i;

	path->mw = calloc(clt->qd, sizeof(*path->mw));
	path->mw_rkey = calloc(clt->qd, sizeof(*path->mw_rkey));
	if (!path->mw || !path->mw_rkey) {
		trs_clt_free_mws(path, 0);
		return -ENOMEM;
	}
	for (i = 0; i < clt->qd; i++) {
		path->mw[i] = ibv_alloc_mw(path->dev->pd, IBV_MW_TYPE_2);
		if (!path->mw[i]) {
			trs_clt_free_mws(path, i);
			return -EOPNOTSUPP;
		}
		path->mw_rkey[i] = path->mw[i]->rkey;
	}
	return 0;
}

int trs_clt_path_mem_setup(struct trs_clt_path *path)
{
	struct ibtrs_clt *clt = path->clt;
	int i, err;

	path->use_mw = false;
	if (trs_clt_wants_mw(clt) && path->dev->mw_state >= 0) {
		err = trs_clt_alloc_mws(path);
		if (!err) {
			path->use_mw = true;
			path->dev->mw_state = 1;
		} else if (err == -EOPNOTSUPP) {
			path->dev->mw_state = -1;
			trs_wrn("%s: memory windows unsupported on %s; read buffers "
				"are registered per IO instead", clt->sessname,
				ibv_get_device_name(path->dev->verbs->device));
		} else {
			return err;
		}
	}
	path->iobuf_mr = trs_clt_reg(path, clt->iobuf, clt->iobuf_len, true);
	if (!path->iobuf_mr) {
		err = -errno;
		goto out_free_mws;
	}
	for (i = 0; i < clt->nregions; i++) {
		struct trs_region *r = &clt->regions[i];

		r->mr[path->idx] = trs_clt_reg(path, r->addr, r->len, false);
		if (!r->mr[path->idx]) {
			err = -errno;
			goto out_dereg;
		}
	}
	return 0;

out_dereg:
	while (--i >= 0) {
		ibv_dereg_mr(clt->regions[i].mr[path->idx]);
		clt->regions[i].mr[path->idx] = NULL;
	}
	ibv_dereg_mr(path->iobuf_mr);
	path->iobuf_mr = NULL;
out_free_mws:
	if (path->mw)
		trs_clt_free_mws(path, clt->qd);
	return err;
}

void trs_clt_path_mem_free(struct trs_clt_path *path)
{
	struct ibtrs_clt *clt = path->clt;
	int i;

	if (path->mw)
		trs_clt_free_mws(path, clt->qd);
	for (i = 0; i < clt->nregions; i++)
		if (clt->regions[i].mr[path->idx]) {
			ibv_dereg_mr(clt->regions[i].mr[path->idx]);
			clt->regions[i].mr[path->idx] = NULL;
		}
	if (path->iobuf_mr) {
		ibv_dereg_mr(path->iobuf_mr);
		path->iobuf_mr = NULL;
	}
}

struct ibv_mr *trs_clt_find_mr(struct trs_clt_path *path, void *addr, size_t len)
{
	struct ibtrs_clt *clt = path->clt;
	uintptr_t a = (uintptr_t)addr;
	int i;

	for (i = 0; i < clt->nregions; i++) {
		uintptr_t b = (uintptr_t)clt->regions[i].addr;

		if (a >= b && a + len <= b + clt->regions[i].len)
			return clt->regions[i].mr[path->idx];
	}
	return NULL;
}

/*
 * The remote key of @req's buffer: @access is IBV_ACCESS_REMOTE_WRITE for a
 * read's buffer, IBV_ACCESS_REMOTE_READ for a pulled write's.
 */
int trs_clt_req_map(struct trs_clt_path *path, struct trs_clt_req *req,
		    void *buf, struct ibv_mr *mr, struct ibv_send_wr *bind_wr,
		    unsigned int access)
{
	if (trs_clt_global_keys(path->clt)) {
		req->rkey = mr->rkey;
		return 0;
	}
	if (path->use_mw) {
		struct ibv_mw *mw = path->mw[req->id];
		uint32_t rkey = ibv_inc_rkey(path->mw_rkey[req->id]);

		bind_wr->opcode = IBV_WR_BIND_MW;
		bind_wr->bind_mw.mw = mw;
		bind_wr->bind_mw.rkey = rkey;
		bind_wr->bind_mw.bind_info.mr = mr;
		bind_wr->bind_mw.bind_info.addr = (uintptr_t)buf;
		bind_wr->bind_mw.bind_info.length = req->len;
		bind_wr->bind_mw.bind_info.mw_access_flags = access;
		req->rkey = rkey;
		req->need_inv = true;
		return 0;
	}
	/* mr_mode reg, or windows unsupported by the device: a registration
	 * over exactly this buffer, dropped before the IO completes. */
	req->io_mr = ibv_reg_mr(path->dev->pd, buf, req->len,
				IBV_ACCESS_LOCAL_WRITE | (int)access);
	if (!req->io_mr)
		return -errno;
	path->st.reg_wrs++;
	req->rkey = req->io_mr->rkey;
	return 0;
}

void trs_clt_req_unmap(struct trs_clt_req *req)
{
	if (req->io_mr) {
		ibv_dereg_mr(req->io_mr);
		req->io_mr = NULL;
	}
}

int ibtrs_clt_reg_mem(struct ibtrs_clt *clt, void *addr, size_t len)
{
	struct trs_region *r;
	int i;

	if (!addr || !len)
		return -EINVAL;
	if (clt->nregions >= TRS_MAX_REGIONS) {
		trs_set_error("too many registered regions (max %d)", TRS_MAX_REGIONS);
		return -ENOSPC;
	}
	r = &clt->regions[clt->nregions];
	memset(r, 0, sizeof(*r));
	r->addr = addr;
	r->len = len;
	for (i = 0; i < clt->npaths; i++) {
		struct trs_clt_path *path = clt->paths[i];

		if (path->state != IBTRS_PATH_CONNECTED || path->fail_pending)
			continue;
		r->mr[i] = trs_clt_reg(path, addr, len, false);
		if (!r->mr[i]) {
			int err = -errno;

			while (--i >= 0)
				if (r->mr[i]) {
					ibv_dereg_mr(r->mr[i]);
					r->mr[i] = NULL;
				}
			trs_set_error("ibv_reg_mr of %zu bytes failed: %s", len,
				      strerror(-err));
			return err;
		}
	}
	clt->nregions++;
	return 0;
}

int ibtrs_clt_unreg_mem(struct ibtrs_clt *clt, void *addr)
{
	int i, p, n;

	for (i = 0; i < clt->nregions; i++)
		if (clt->regions[i].addr == addr)
			break;
	if (i == clt->nregions)
		return -ENOENT;
	for (n = 0; n < (int)clt->qd; n++) {
		struct trs_clt_req *req = &clt->reqs[n];
		uintptr_t a, b = (uintptr_t)addr;

		if (!req->active || req->bounce || !req->iovcnt)
			continue;
		a = (uintptr_t)req->iov[0].iov_base;
		if (a >= b && a < b + clt->regions[i].len)
			return -EBUSY;
	}
	for (p = 0; p < IBTRS_MAX_PATHS; p++)
		if (clt->regions[i].mr[p])
			ibv_dereg_mr(clt->regions[i].mr[p]);
	clt->regions[i] = clt->regions[--clt->nregions];
	/* moved region keeps its per-path MRs (indexed by path, not region) */
	return 0;
}
