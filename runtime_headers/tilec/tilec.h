// tilec runtime: everything a generated source includes.
#pragma once
// and a guard, for clang++'s precompiled header: it holds another copy of this file, which the
// compile force-includes by its own path before the source includes this one (backend_cpu/clang_pch.py)
#ifndef TILEC_RT_TILEC_H
#define TILEC_RT_TILEC_H
#include "core.h"
#include "scalar.h"
#include "ctx.h"
#include "atomic.h"
#include "vec.h"
#include "quat.h"
#include "decompositions.h"
#include "debug.h"
#include "array_views.h"
#include "creation.h"
#include "memory.h"
#include "tile_sums.h"
#include "reduce.h"
#include "linalg.h"
#include "matmul_adds.h"
#include "fft.h"
#include "random.h"
#include "noise.h"
#include "hash_grid.h"
#include "mesh.h"
#include "mesh_query.h"
#include "volume.h"
#include "live_ids.h"
#include "texture.h"
#include "triangles.h"
#include "stack.h"
#include "views.h"
#include "grads.h"
#include "shared_tiles.h"
#include "registers.h"
#include "device_tape.h"
#include "global_scratch.h"
#endif  // TILEC_RT_TILEC_H
