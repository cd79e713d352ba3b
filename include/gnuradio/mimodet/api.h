/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_API_H
#define INCLUDED_MIMODET_API_H

#include <gnuradio/attributes.h>

#ifdef gnuradio_mimodet_EXPORTS
#define MIMODET_API __GR_ATTR_EXPORT
#else
#define MIMODET_API __GR_ATTR_IMPORT
#endif

#endif /* INCLUDED_MIMODET_API_H */
