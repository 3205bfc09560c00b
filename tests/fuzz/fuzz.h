/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share: reading
 * fields out of the fuzzer's input, exactly sized heap copies (so that
 * AddressSanitizer catches a parser reading one byte past what it was
 * given) and invariant checks that abort, which libFuzzer reports as a
 * crash and saves the input of (tests/fuzz/README.md).
 */
#ifndef FUZZ_H
#define FUZZ_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void __attribute__((noreturn))
fz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "FUZZ INVARIANT FAILED: %s:%d: %s\n", file, line, what);
	abort();
}

/* An invariant of the parser under test: abort (a finding) when false. */
#define FZ_CHECK(cond) \
	do { \
		if (!(cond)) \
			fz_fail(__FILE__, __LINE__, #cond); \
	} while (0)

/* malloc() that never returns NULL: an allocation failure is no finding. */
static inline void *fz_alloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		abort();
	return p;
}

/*
 * A heap copy of exactly @len bytes (one byte allocated for @len == 0, never
 * readable by a correct parser): a read past @len is a heap-buffer-overflow.
 */
static inline void *fz_dup(const void *src, size_t len)
{
	void *p = fz_alloc(len);

	if (len)
		memcpy(p, src, len);
	return p;
}

/*
 * A log function's body in a harness: the message is formatted (so a bad
 * format or argument is caught by the sanitizers) and dropped.
 */
static inline int fz_format(const char *fmt, va_list ap)
{
	static char line[1024];

	return vsnprintf(line, sizeof(line), fmt, ap);
}

/* The input, consumed front to back. */
struct fz_in {
	const uint8_t *p;
	size_t n;
};

static inline void fz_in_init(struct fz_in *in, const uint8_t *data,
			      size_t size)
{
	in->p = data;
	in->n = size;
}

/* Little-endian integers; missing bytes read as 0. */
static inline uint64_t fz_uint(struct fz_in *in, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++) {
		if (in->n) {
			v |= (uint64_t)in->p[0] << (8 * i);
			in->p++;
			in->n--;
		}
	}
	return v;
}

static inline uint8_t fz_u8(struct fz_in *in)
{
	return (uint8_t)fz_uint(in, 1);
}

static inline uint16_t fz_u16(struct fz_in *in)
{
	return (uint16_t)fz_uint(in, 2);
}

static inline uint32_t fz_u32(struct fz_in *in)
{
	return (uint32_t)fz_uint(in, 4);
}

static inline uint64_t fz_u64(struct fz_in *in)
{
	return fz_uint(in, 8);
}

/*
 * The next field up to a NUL (or the end of the input) as a NUL-terminated
 * heap string of exactly strlen + 1 bytes; NULL when the input is used up.
 */
static inline char *fz_field(struct fz_in *in)
{
	const uint8_t *nul;
	size_t len;
	char *s;

	if (!in->n)
		return NULL;
	nul = memchr(in->p, 0, in->n);
	len = nul ? (size_t)(nul - in->p) : in->n;
	s = fz_alloc(len + 1);
	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += len;
	in->n -= len;
	if (nul) {
		in->p++;
		in->n--;
	}
	return s;
}

/* The rest of the input as an exactly sized heap copy (*len bytes). */
static inline void *fz_rest(struct fz_in *in, size_t *len)
{
	void *p = fz_dup(in->p, in->n);

	*len = in->n;
	in->p += in->n;
	in->n = 0;
	return p;
}

/* The rest of the input as a NUL-terminated string (stops at a NUL). */
static inline char *fz_rest_str(struct fz_in *in)
{
	size_t len = strnlen((const char *)in->p, in->n);
	char *s = fz_alloc(len + 1);

	memcpy(s, in->p, len);
	s[len] = '\0';
	in->p += in->n;
	in->n = 0;
	return s;
}

#endif /* FUZZ_H */
