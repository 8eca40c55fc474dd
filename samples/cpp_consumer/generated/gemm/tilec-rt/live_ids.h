// tilec runtime: ids of hash grids, meshes, BVHs and volumes that a kernel reads from values (an element of a
// uint64 array, a local) rather than from a parameter the loader checked. Newton keeps mesh ids in a
// uint64 array whose other elements hold other things (0, indices), as many Warp programs do, so such
// an id is checked where it is used: `live_id` looks it up in the table of the objects alive at the
// launch (their ids ascending and each one's kind), which the loader sets through the module's
// `<module>_set_live_ids` before launching a kernel that reads one. An id that is no live object of the
// kind read gives the null id, which reads as that kind's empty object (no triangles, no points: every
// query finds nothing, every read is zero), never an address nobody made. Warp dereferences any such number.
//
// The table is per library (hidden visibility: two modules' libraries never share it). A C++ caller
// of such a kernel sets it the same way, or every id it passes this way reads as an empty object.
// On a GPU no table is set, and the loader refuses those launches.
#pragma once
#include <cstdint>
#include "core.h"

namespace tl {

// The kinds of the loader's table (tilec-rt/spatial.py LIVE_KINDS): keep the two in step. A read
// of a hash grid whose points' precision the kernel does not fix takes either.
enum LiveKind : int32_t { LIVE_ANY_HASH_GRID = 0, LIVE_HASH_GRID_F32 = 1, LIVE_HASH_GRID_F64 = 2, LIVE_MESH = 3,
                          LIVE_BVH = 4, LIVE_VOLUME = 5 };

struct LiveIds {
    const uint64_t* ids;  // ascending
    const int32_t* kinds;  // LiveKind of each
    int64_t count;
};

#ifndef __CUDA_ARCH__
__attribute__((visibility("hidden"))) inline LiveIds live_ids_table = {nullptr, nullptr, 0};

TL_HD bool live_kind_matches(int32_t kind, int32_t wanted) {
    return kind == wanted || (wanted == LIVE_ANY_HASH_GRID && (kind == LIVE_HASH_GRID_F32 || kind == LIVE_HASH_GRID_F64));
}
#endif

// `id` if the table holds it as an object of kind `wanted`, else the null id (0), which every op reads as that
// kind's empty object (mesh.h mesh_of, hash_grid.h hash_grid, volume.h volume_of).
TL_HD uint64_t live_id(uint64_t id, int32_t wanted) {
#ifdef __CUDA_ARCH__
    (void)id;
    (void)wanted;
    return 0;  // the loader refuses these launches on a GPU (see above)
#else
    const LiveIds& t = live_ids_table;
    int64_t lo = 0, hi = t.count;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (t.ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < t.count && t.ids[lo] == id && live_kind_matches(t.kinds[lo], wanted) ? id : 0;
#endif
}

// What `<module>_set_live_ids` does: point the table at the caller's arrays (kept alive and unchanged
// while kernels of this library run); 1 (refused) unless the ids ascend strictly.
inline int set_live_ids(const uint64_t* ids, const int32_t* kinds, int64_t count) {
#ifdef __CUDA_ARCH__
    return 1;
#else
    if (count < 0 || (count > 0 && (ids == nullptr || kinds == nullptr))) return 1;
    for (int64_t k = 1; k < count; ++k)
        if (ids[k - 1] >= ids[k]) return 1;
    live_ids_table = LiveIds{ids, kinds, count};
    return 0;
#endif
}

}  // namespace tl
