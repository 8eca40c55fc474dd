// tilec runtime: everything a generated source includes.
#pragma once
#include "core.h"
#include "scalar.h"
#include "ctx.h"
#include "atomic.h"
#include "creation.h"
#include "memory.h"
#include "reduce.h"
#include "linalg.h"
#include "views.h"
#include "grads.h"
#include "shared_tiles.h"
#include "registers.h"
