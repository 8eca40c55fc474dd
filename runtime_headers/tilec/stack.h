// tilec runtime: block stacks (Warp's tile_stack). Every thread of the block calls push, pop and
// clear together; slots go to the threads in the order they reach the counter (thread order on the
// CPU, whose lanes run in turn between barriers). The storage is the block's: shared memory on the
// GPU, one buffer per declaration and OS thread on the CPU (a block's lanes are fibers of one thread).
#pragma once
#include "atomic.h"
#include "ctx.h"

namespace tl {

template <class T, int C> struct Stack {
    static constexpr int data_bytes = (int(sizeof(T)) * C + 7) / 8 * 8;  // then the int count
    T* data = nullptr;
    int* count = nullptr;
};

#if !defined(__CUDA_ARCH__)
template <int Bytes, int Site> inline unsigned char* cpu_stack_memory() {
    alignas(16) static thread_local unsigned char memory[Bytes];
    return memory;
}
#endif

// An empty stack over `memory` (its elements zeroed, as Warp's).
template <class T, int C> TL_HD Stack<T, C> tile_stack(Ctx& ctx, unsigned char* memory) {
    Stack<T, C> s;
    s.data = reinterpret_cast<T*>(memory);
    s.count = reinterpret_cast<int*>(memory + Stack<T, C>::data_bytes);
    ctx.sync();  // no thread still uses a previous stack in this memory
    if (ctx.leader()) {
        *s.count = 0;
        for (int i = 0; i < C; ++i) s.data[i] = T();
    }
    ctx.sync();
    return s;
}

// Each contributing thread takes the next slot; past capacity the value is dropped (slot -1) and
// the count saturates at capacity.
template <class T, int C, class V> TL_HD int32_t tile_stack_push(Ctx& ctx, Stack<T, C> s, V value, bool has_value) {
    ctx.sync();
    int slot = -1;
    has_value = has_value && !ctx.standin();  // a partial block's stand-in thread pushes nothing
    if (has_value) {
        slot = atomic_add_ptr(s.count, 1);
        if (slot < C) s.data[slot] = T(value);
    }
    ctx.sync();
    if (ctx.leader() && *s.count > C) *s.count = C;
    ctx.sync();
    return has_value && slot >= 0 && slot < C ? slot : -1;
}

// Each thread takes the top element left (value, slot), or (0, -1) once none is left (a zero vector
// or matrix in a stack of them: T() is every element type's zero).
template <class T, int C> TL_HD void tile_stack_pop(Ctx& ctx, Stack<T, C> s, T& value, int32_t& slot) {
    ctx.sync();
    const int taken = ctx.standin() ? -1 : atomic_add_ptr(s.count, -1) - 1;  // a stand-in takes none
    const bool ok = taken >= 0 && taken < C;
    value = ok ? s.data[taken] : T();
    slot = ok ? taken : -1;
    ctx.sync();
    if (ctx.leader() && *s.count < 0) *s.count = 0;
    ctx.sync();
}

// The fields of a stack of structs are one stack each; the first field's push and pop pick the
// slots, and every other field's stack stores and reads at those slots (never its own count).
TL_HD void tile_stack_put_fields(int32_t) {}
template <class T, int C, class V, class... Rest>
TL_HD void tile_stack_put_fields(int32_t slot, Stack<T, C> s, V value, Rest... rest) {
    if (slot >= 0 && slot < C) s.data[slot] = T(value);
    tile_stack_put_fields(slot, rest...);
}
template <class T, int C, class V, class... Fields>
TL_HD int32_t tile_stack_push_fields(Ctx& ctx, Stack<T, C> s, V value, bool has_value, Fields... fields) {
    const int32_t slot = tile_stack_push(ctx, s, value, has_value);  // ends in a barrier; a pop starts with one
    tile_stack_put_fields(slot, fields...);
    return slot;
}
template <class T, int C> TL_HD T tile_stack_get(Ctx&, Stack<T, C> s, int32_t slot) {
    return slot >= 0 && slot < C ? s.data[slot] : T();
}

template <class T, int C> TL_HD int32_t tile_stack_count(Ctx&, Stack<T, C> s) { return *s.count; }

template <class T, int C> TL_HD void tile_stack_clear(Ctx& ctx, Stack<T, C> s) {
    ctx.sync();
    if (ctx.leader()) *s.count = 0;
    ctx.sync();
}

}  // namespace tl
