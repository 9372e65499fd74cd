/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Devpath order: the topological order of devices (PCI address,
 * "host10" after "host2", H:C:T:L numerically) that the engine's cookies
 * follow.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <string.h>


#include "base/base.h"
#include "device/device.h"

#include "internal.h"

/* "dddd:bb:dd.f": a PCI address, fixed-width lower-case hex. */
static bool is_pci_address(const char *s, size_t n)
{
	static const char pattern[] = "hhhh:hh:hh.h";
	size_t i;

	if (n != sizeof(pattern) - 1)
		return false;
	for (i = 0; i < n; i++) {
		if (pattern[i] == 'h') {
			if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
				return false;
		} else if (s[i] != pattern[i]) {
			return false;
		}
	}
	return true;
}

/* Natural order within one path component: digit runs compare as numbers. */
static int natural_compare(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i = 0, j = 0;

	while (i < na && j < nb) {
		bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';

		if (da && db) {
			size_t si, sj, li, lj;

			while (i < na && a[i] == '0' && i + 1 < na && a[i + 1] >= '0' && a[i + 1] <= '9')
				i++;
			while (j < nb && b[j] == '0' && j + 1 < nb && b[j + 1] >= '0' && b[j + 1] <= '9')
				j++;
			for (si = i; i < na && a[i] >= '0' && a[i] <= '9'; i++)
				;
			for (sj = j; j < nb && b[j] >= '0' && b[j] <= '9'; j++)
				;
			li = i - si;
			lj = j - sj;
			if (li != lj)
				return li < lj ? -1 : 1;
			if (memcmp(a + si, b + sj, li) != 0)
				return memcmp(a + si, b + sj, li) < 0 ? -1 : 1;
			continue;
		}
		if (a[i] != b[j])
			return (unsigned char)a[i] < (unsigned char)b[j] ? -1 : 1;
		i++;
		j++;
	}
	if (i < na)
		return 1;
	if (j < nb)
		return -1;
	return 0;
}

int ap_devpath_compare(const char *a, const char *b)
{
	while (*a && *b) {
		size_t na = strcspn(a, "/"), nb = strcspn(b, "/");
		int r;

		if (is_pci_address(a, na) && is_pci_address(b, nb))
			r = memcmp(a, b, na);
		else
			r = natural_compare(a, na, b, nb);
		if (r)
			return r < 0 ? -1 : 1;
		a += na;
		b += nb;
		/* both at '/' or at the end */
		if (*a != *b)
			return *a ? 1 : -1;
		if (*a) {
			a++;
			b++;
		}
	}
	if (*a)
		return 1;
	if (*b)
		return -1;
	return 0;
}
