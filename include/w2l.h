/*
 * libwholedb2lake: sync a whole MySQL/MariaDB database into Apache Iceberg tables,
 * exactly once. The one header a program includes. See libwholedb2lake(3).
 */
#ifndef W2L_H
#define W2L_H

#include "w2l/version.h"
#include "w2l/error.h"
#include "w2l/alloc.h"
#include "w2l/log.h"
#include "w2l/conf.h"
#include "w2l/types.h"
#include "w2l/event.h"
#include "w2l/fileio.h"
#include "w2l/state.h"
#include "w2l/source.h"
#include "w2l/catalog.h"
#include "w2l/pipeline.h"
#include "w2l/lake.h"
#include "w2l/maintain.h"
#include "w2l/verify.h"

#endif
