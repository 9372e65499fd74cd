/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcrypto.so.3 for asyncprobe's initramfs: the 19 OpenSSL calls libkmod
 * makes, each answering "nothing there".
 *
 * Debian's libkmod (kmod 30) links libcrypto (4.7 MB, 1.6 MB of a zstd
 * image: 44% of a host-only one) for one purpose: describing a
 * module's PKCS#7 signature (signer, key id, hash) in kmod_module_get_info(),
 * which modinfo prints.  Loading modules does not use it: the kernel checks
 * signatures itself.  asyncprobe never asks for module information, but
 * libkmod is linked with BIND_NOW, so the dynamic loader wants every one of
 * these symbols, with their OPENSSL_3.0.0 version, before main().
 *
 * Here BIO_new_mem_buf() and d2i_PKCS7_bio() return NULL, the first step
 * of libkmod's signature parser, which then reports no signature details
 * (as for an unsigned module); the other calls are never reached and
 * return what OpenSSL returns for empty input.  asyncprobe-mkinitramfs puts
 * this library in place of libcrypto.so.3 only when the dynamic loader
 * resolves every OpenSSL symbol of the image's programs and libraries
 * against it (ldd -r), so a program added with --add that really uses
 * OpenSSL keeps the real one.
 */
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

/* OpenSSL's signatures, with void * for its opaque types */
EXPORT void *BIO_new_mem_buf(const void *buf, int len);
EXPORT int BIO_free(void *bio);
EXPORT void *d2i_PKCS7_bio(void *bio, void **p7);
EXPORT void PKCS7_free(void *p7);
EXPORT void *PKCS7_get_signer_info(void *p7);
EXPORT void PKCS7_SIGNER_INFO_get0_algs(void *si, void **pk, void **pdig, void **psig);
EXPORT void X509_ALGOR_get0(const void **paobj, int *pptype, const void **ppval, const void *algor);
EXPORT void *OPENSSL_sk_value(const void *st, int i);
EXPORT int OBJ_obj2nid(const void *o);
EXPORT void *ASN1_INTEGER_to_BN(const void *ai, void *bn);
EXPORT const unsigned char *ASN1_STRING_get0_data(const void *x);
EXPORT int ASN1_STRING_length(const void *x);
EXPORT int BN_bn2bin(const void *a, unsigned char *to);
EXPORT void BN_free(void *a);
EXPORT int BN_num_bits(const void *a);
EXPORT int X509_NAME_entry_count(const void *name);
EXPORT void *X509_NAME_get_entry(const void *name, int loc);
EXPORT void *X509_NAME_ENTRY_get_object(const void *ne);
EXPORT void *X509_NAME_ENTRY_get_data(const void *ne);

EXPORT void *BIO_new_mem_buf(const void *buf, int len)
{
	(void)buf;
	(void)len;
	return NULL;
}

EXPORT int BIO_free(void *bio)
{
	(void)bio;
	return 0;
}

EXPORT void *d2i_PKCS7_bio(void *bio, void **p7)
{
	(void)bio;
	(void)p7;
	return NULL;
}

EXPORT void PKCS7_free(void *p7)
{
	(void)p7;
}

EXPORT void *PKCS7_get_signer_info(void *p7)
{
	(void)p7;
	return NULL;
}

EXPORT void PKCS7_SIGNER_INFO_get0_algs(void *si, void **pk, void **pdig, void **psig)
{
	(void)si;
	if (pk)
		*pk = NULL;
	if (pdig)
		*pdig = NULL;
	if (psig)
		*psig = NULL;
}

EXPORT void X509_ALGOR_get0(const void **paobj, int *pptype, const void **ppval, const void *algor)
{
	(void)algor;
	if (paobj)
		*paobj = NULL;
	if (pptype)
		*pptype = -1;
	if (ppval)
		*ppval = NULL;
}

EXPORT void *OPENSSL_sk_value(const void *st, int i)
{
	(void)st;
	(void)i;
	return NULL;
}

EXPORT int OBJ_obj2nid(const void *o)
{
	(void)o;
	return 0; /* NID_undef */
}

EXPORT void *ASN1_INTEGER_to_BN(const void *ai, void *bn)
{
	(void)ai;
	(void)bn;
	return NULL;
}

EXPORT const unsigned char *ASN1_STRING_get0_data(const void *x)
{
	(void)x;
	return NULL;
}

EXPORT int ASN1_STRING_length(const void *x)
{
	(void)x;
	return 0;
}

EXPORT int BN_bn2bin(const void *a, unsigned char *to)
{
	(void)a;
	(void)to;
	return 0;
}

EXPORT void BN_free(void *a)
{
	(void)a;
}

EXPORT int BN_num_bits(const void *a)
{
	(void)a;
	return 0;
}

EXPORT int X509_NAME_entry_count(const void *name)
{
	(void)name;
	return 0;
}

EXPORT void *X509_NAME_get_entry(const void *name, int loc)
{
	(void)name;
	(void)loc;
	return NULL;
}

EXPORT void *X509_NAME_ENTRY_get_object(const void *ne)
{
	(void)ne;
	return NULL;
}

EXPORT void *X509_NAME_ENTRY_get_data(const void *ne)
{
	(void)ne;
	return NULL;
}
