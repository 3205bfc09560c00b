// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_info_req.c - the INFO_REQ message a server receives on a path's
 * first connection (trs_info_req_decode()).
 *
 * Input: the message as received (the receive completion's byte_len
 * bytes). The session name goes into an exactly sized 64-byte heap buffer.
 * Checks: 0 or -EPROTO with a reason; an accepted name is 1..63 printable
 * ASCII characters without '/', terminated, equal to the bytes sent;
 * re-encoding the name reproduces the message and decodes to the same
 * name.
 */
#include "fuzz.h"
#include "trs_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trs_msg_info_req m;
	const char *why = NULL;
	void *buf = fz_dup(data, size);
	char *name = fz_alloc(TRS_SESSNAME_MAX);
	char *again = fz_alloc(TRS_SESSNAME_MAX);
	size_t len, i;
	int ret;

	ret = trs_info_req_decode(buf, (__u32)size, name, &why);
	FZ_CHECK(ret == 0 || ret == -EPROTO);
	if (ret) {
		FZ_CHECK(why && *why);
		goto out;
	}
	FZ_CHECK(size >= sizeof(m));
	len = strnlen(name, TRS_SESSNAME_MAX);
	FZ_CHECK(len >= 1 && len < TRS_SESSNAME_MAX);
	for (i = 0; i < len; i++)
		FZ_CHECK(name[i] >= 0x20 && name[i] <= 0x7e && name[i] != '/');
	FZ_CHECK(!memcmp(name, (const __u8 *)buf +
			 offsetof(struct trs_msg_info_req, sessname), len + 1));

	trs_info_req_encode(&m, name);
	FZ_CHECK(!memcmp(&m, buf, offsetof(struct trs_msg_info_req, reserved)));
	FZ_CHECK(!memcmp(&m.flags, (const __u8 *)buf +
			 offsetof(struct trs_msg_info_req, flags),
			 sizeof(m.flags)));
	FZ_CHECK(trs_info_req_decode(&m, sizeof(m), again, &why) == 0);
	FZ_CHECK(!strcmp(name, again));
out:
	free(again);
	free(name);
	free(buf);
	return 0;
}
